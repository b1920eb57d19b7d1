//! A gateway: one MCP endpoint that serves this application's own tools
//! and the tools of another MCP server (the reference server
//! `server-everything`), behind one registry, one policy, one approval
//! ledger and one audit trail.
//!
//! The upstream may be started only as the allowlist in `main.rs` says,
//! its tools are pinned (a changed one is switched off), and every one not
//! decided `read` here waits for a manager's approval, like the local
//! `notes.add`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolwright::approval::{Approvals, MemoryLedger};
use toolwright::audit::AuditTrail;
use toolwright::import::mcp::{Allowlist, Changed, Pins, RemoteTools, StdioUpstream};
use toolwright::mcp::{McpServer, McpServerBuilder};
use toolwright::registry::{Policy, Registry, Rule, Selector, View};
use toolwright::{BoxError, Catalog, Container, Effect, Executor, Inject, Principal, tool};

/// Who calls: a manager, or not.
#[derive(Debug, Clone)]
pub struct Caller {
    id: String,
    manager: bool,
}

impl Caller {
    /// A caller named `id`.
    pub fn new(id: impl Into<String>, manager: bool) -> Self {
        Caller {
            id: id.into(),
            manager,
        }
    }
}

impl Principal for Caller {
    fn id(&self) -> &str {
        &self.id
    }

    fn has_role(&self, role: &str) -> bool {
        role == "manager" && self.manager
    }
}

/// The notes this application keeps.
#[derive(Default)]
pub struct Notes(Mutex<Vec<String>>);

/// Keep a note.
#[tool(key = "notes.add", effect = write, authorize = public, approve = Caller::approval_ledger)]
async fn add_note(text: String, notes: Inject<Notes>) -> usize {
    let mut notes = notes.0.lock().unwrap_or_else(|e| e.into_inner());
    notes.push(text);
    notes.len()
}

/// The notes kept so far.
#[tool(key = "notes.list", effect = read, authorize = public)]
async fn list_notes(notes: Inject<Notes>) -> Vec<String> {
    notes.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// The running gateway's parts.
pub struct Gateway {
    /// The MCP server, to serve over stdio or HTTP.
    pub server: McpServerBuilder<Caller>,
    /// The ledger managers decide in.
    pub approvals: Approvals,
    /// The pins to keep for the next start.
    pub pins: Pins,
    /// The upstream's tools whose definition changed since they were
    /// pinned: switched off until a person accepts them.
    pub changed: Vec<Changed>,
}

/// The gateway, with `server-everything` started as `program` `args` (if
/// `allowlist` allows it), its tools checked against `pins`, and every
/// write and destructive call recorded in `audit`.
pub async fn gateway(
    program: &str,
    args: &[String],
    allowlist: &Allowlist,
    pins: Pins,
    audit: impl AuditTrail,
) -> Result<Gateway, BoxError> {
    let imported = StdioUpstream::new("everything", program, args)
        .env(["PATH", "HOME"])
        .tools(RemoteTools::only([
            "echo",
            "get-sum",
            "toggle-simulated-logging",
        ]))
        .effect("echo", Effect::Read)
        .effect("get-sum", Effect::Read)
        .approvals::<Caller>()
        .pins(pins)
        .timeout(Duration::from_secs(30))
        .max_concurrent(8)
        .connect(allowlist)
        .await?;
    let (pins, changed) = (imported.pins().clone(), imported.changed().to_vec());
    let catalog = Catalog::builder()
        .register::<AddNoteArgs>()
        .register::<ListNotesArgs>()
        .build()?;
    let registry = Registry::new(catalog);
    imported.register(&registry)?;
    // Nobody calls the upstream's destructive tools without a manager's
    // say-so, whatever its hooks would allow.
    let upstream_destructive =
        Selector::namespace("everything").and(Selector::effect(Effect::Destructive));
    registry.set_policy(Policy::new().rule(Rule::ask(
        "destructive upstream tools",
        upstream_destructive,
    )));
    let approvals = Approvals::builder(MemoryLedger::new())
        .approver_role("manager")
        .build();
    let container = Container::builder()
        .app::<Notes>(Arc::new(Notes::default()))
        .build();
    let executor = Executor::builder(registry, container)
        .approvals(approvals.clone())
        .audit(audit)
        .build()?;
    // Someone who is not a manager sees and calls only what reads.
    let server = McpServer::builder(executor, "gateway", env!("CARGO_PKG_VERSION")).views(
        |caller: &Caller| match caller.manager {
            true => View::new(Selector::All),
            false => View::new(Selector::effect(Effect::Read)),
        },
    );
    Ok(Gateway {
        server,
        approvals,
        pins,
        changed,
    })
}

//! A gateway: one MCP endpoint that serves this application's own tools
//! and the tools of two other MCP servers (the reference servers
//! `server-everything` and `server-filesystem`), behind one registry, one
//! policy, one approval ledger and one audit trail.
//!
//! The upstreams may be started only as the allowlist in `main.rs` says,
//! their tools are pinned (a changed one is switched off), and every one
//! not decided `read` here waits for a manager's approval, like the local
//! `notes.add`.

use std::collections::BTreeMap;
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
    /// The executor the server calls through: for the admin page.
    pub executor: Executor,
    /// The ledger managers decide in.
    pub approvals: Approvals,
    /// The pins to keep for the next start, by upstream namespace.
    pub pins: BTreeMap<String, Pins>,
    /// The upstreams' tools whose definition changed since they were
    /// pinned: switched off until a person accepts them.
    pub changed: Vec<Changed>,
}

/// How the gateway starts its upstreams: each a program and its
/// arguments, which the allowlist must list.
#[derive(Debug, Clone)]
pub struct Upstreams {
    /// `server-everything`, speaking stdio.
    pub everything: (String, Vec<String>),
    /// `server-filesystem`, its last argument the directory it serves.
    pub files: (String, Vec<String>),
}

/// What keeps an upstream's pins (its namespace, its pins) after a
/// changed definition was accepted.
pub type KeepPins = Arc<dyn Fn(&str, &Pins) + Send + Sync>;

/// The gateway, with its upstreams started as `upstreams` says (if
/// `allowlist` allows it), their tools checked against `pins` (by
/// namespace, kept by `keep` after an acceptance), and every write and
/// destructive call recorded in `audit`.
pub async fn gateway(
    upstreams: &Upstreams,
    allowlist: &Allowlist,
    mut pins: BTreeMap<String, Pins>,
    keep: KeepPins,
    audit: impl AuditTrail,
) -> Result<Gateway, BoxError> {
    let (program, args) = &upstreams.everything;
    let everything = StdioUpstream::new("everything", program, args)
        .env(["PATH", "HOME"])
        .tools(RemoteTools::only([
            "echo",
            "get-sum",
            "toggle-simulated-logging",
        ]))
        .effect("echo", Effect::Read)
        .effect("get-sum", Effect::Read);
    let (program, args) = &upstreams.files;
    let files = StdioUpstream::new("files", program, args)
        .env(["PATH", "HOME"])
        .tools(RemoteTools::only([
            "list_directory",
            "read_text_file",
            "write_file",
        ]))
        .effect("list_directory", Effect::Read)
        .effect("read_text_file", Effect::Read)
        .effect("write_file", Effect::Write);
    let catalog = Catalog::builder()
        .register::<AddNoteArgs>()
        .register::<ListNotesArgs>()
        .build()?;
    let registry = Registry::new(catalog);
    let mut changed = Vec::new();
    for (namespace, upstream) in [("everything", everything), ("files", files)] {
        let keep = keep.clone();
        let imported = upstream
            .approvals::<Caller>()
            .pins(pins.remove(namespace).unwrap_or_default())
            .on_pinned(move |pins| keep(namespace, pins))
            .timeout(Duration::from_secs(30))
            .max_concurrent(8)
            .connect(allowlist)
            .await?;
        pins.insert(namespace.to_owned(), imported.pins().clone());
        changed.extend_from_slice(imported.changed());
        imported.register(&registry)?;
    }
    // The upstreams' tools are deferred: a model sees the gateway's own
    // and `search_tools`, and finds the others when it needs them.
    let upstreams = Selector::namespace("everything").or(Selector::namespace("files"));
    registry.defer(&upstreams, true)?;
    // Nobody calls an upstream's destructive tools without a manager's
    // say-so, whatever its hooks would allow.
    let upstream_destructive = upstreams.and(Selector::effect(Effect::Destructive));
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
    // `mcp_calls`: an upstream's progress on a call reaches its client.
    let server = McpServer::builder(executor.clone(), "gateway", env!("CARGO_PKG_VERSION"))
        .mcp_calls()
        // Managers also see the imports' `accept_definition` tools (tag
        // `pins`): one asks to accept a changed definition, another
        // approves it in the ledger.
        .views(|caller: &Caller| match caller.manager {
            true => View::new(Selector::All),
            false => View::new(Selector::effect(Effect::Read)),
        });
    Ok(Gateway {
        server,
        executor,
        approvals,
        pins,
        changed,
    })
}

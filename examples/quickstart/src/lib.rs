//! The toolwright quickstart: a small task list served as tools.
//!
//! The library holds the application (domain, hooks, tools, container) and
//! its command line, [`run`]; `src/main.rs` only calls it, and the test
//! suite drives the same command line through an MCP client.
//!
//! It declares read, write and destructive tools, injects an APP service
//! and a REQUEST-scoped unit of work whose finalizer commits or rolls back,
//! then prints the catalog and runs calls that are allowed, denied, waiting
//! for approval and approved. Writes go through the library's approvals: a
//! call records a request in a [`MemoryLedger`], someone other than the
//! requester approves it, the requester's identical call runs once, and the
//! ledger keeps how it ended. Each actor has a view: administrators see
//! every tool, others are not shown the `admin`-tagged one and cannot call it.
//!
//! Run it with `cargo run -p quickstart`. With `--format NAME` (`openai`,
//! `openai-strict`, `openai-responses`, `openai-responses-strict`,
//! `anthropic`, `gemini`, `gemini-json-schema`) it prints the `tools` field
//! of a request to that model API instead, and exits. With `--stdio` it
//! serves its tools to an MCP client on stdin/stdout (as the non-admin
//! `local`); with `--http ADDR` over Streamable HTTP at `http://ADDR/mcp`,
//! where the bearer token `ada-token` is an admin and `bob-token` is not;
//! `--http ADDR --anonymous` asks for no credentials and makes every caller
//! the non-admin `guest`, on a loopback address only (for clients that
//! cannot send a token, such as the MCP conformance suite), and adding
//! `--conformance` also serves the fixtures that suite asks for (see
//! `conformance.rs`). `--help` lists the options.
//! Over MCP, a client that declares elicitation asks its person to approve
//! a write (the caller may approve their own there); any other client gets
//! the request back.

mod conformance;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use std::process::ExitCode;

use toolwright::approval::{ApprovalId, MemoryLedger};
use toolwright::mcp::{self, HttpOptions, McpServer, McpServerBuilder, Rejection};
use toolwright::providers;
use toolwright::{
    ApprovalRequest, Approvals, CallError, Catalog, Container, Context, Executor, Inject,
    Invocation, Preflight, Principal, ResolveError, Scope, Selector, View, tool,
};

// ---------------------------------------------------------------- the domain

/// A task on the shared list.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
struct Task {
    id: u64,
    title: String,
    done: bool,
}

/// The application's task store: an APP value, shared by every call.
trait TaskStore: Send + Sync {
    fn list(&self) -> Vec<Task>;
    fn apply(&self, change: Change);
}

/// One change to the store, buffered by a unit of work until it commits.
#[derive(Debug)]
enum Change {
    Add(Task),
    Delete(u64),
}

#[derive(Default)]
struct MemoryStore {
    tasks: Mutex<BTreeMap<u64, Task>>,
    next_id: AtomicU64,
}

impl TaskStore for MemoryStore {
    fn list(&self) -> Vec<Task> {
        self.tasks.lock().unwrap().values().cloned().collect()
    }

    fn apply(&self, change: Change) {
        let mut tasks = self.tasks.lock().unwrap();
        match change {
            Change::Add(task) => {
                tasks.insert(task.id, task);
            }
            Change::Delete(id) => {
                tasks.remove(&id);
            }
        }
    }
}

impl MemoryStore {
    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// A REQUEST value: the changes of one call, applied only if the call succeeds.
struct UnitOfWork {
    pending: Mutex<Vec<Change>>,
}

impl UnitOfWork {
    fn stage(&self, change: Change) {
        self.pending.lock().unwrap().push(change);
    }
}

// ------------------------------------------------------------- who is calling

/// The caller's context: never supplied by a model, always by the application.
#[derive(Clone)]
struct Actor {
    name: &'static str,
    admin: bool,
    /// The tools this actor is shown and may call at all.
    view: View,
}

/// The actor as the approvals know them: who asks, who decides.
impl Principal for Actor {
    fn id(&self) -> &str {
        self.name
    }

    fn has_role(&self, role: &str) -> bool {
        role == "admin" && self.admin
    }
}

/// What an actor sees: administrators every tool, others all but the
/// `admin`-tagged ones. A view hides and refuses; each tool's hooks still
/// decide what a visible tool lets its caller do.
fn view_for(admin: bool) -> View {
    if admin {
        View::new(Selector::All)
    } else {
        View::new(!Selector::tag("admin"))
    }
}

// ------------------------------------------------------------------ the hooks

/// Any signed-in actor may use the tool.
async fn members<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    !actor.name.is_empty()
}

/// Only administrators may use the tool.
async fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.has_role("admin")
}

// ------------------------------------------------------------------ the tools

/// List every task on the shared list.
#[tool(key = "tasks.list", effect = read, authorize = members)]
async fn list_tasks(
    /// Only tasks whose title contains this text.
    contains: Option<String>,
    store: Inject<dyn TaskStore>,
) -> Vec<Task> {
    let needle = contains.unwrap_or_default();
    store
        .list()
        .into_iter()
        .filter(|t| t.title.contains(&needle))
        .collect()
}

/// Add a task to the shared list.
#[tool(
    key = "tasks.add",
    effect = write,
    authorize = members,
    approve = Actor::approval_ledger
)]
async fn add_task(
    /// What needs doing.
    #[schemars(length(min = 1, max = 80))]
    title: String,
    ids: Inject<MemoryStore>,
    work: Inject<UnitOfWork>,
    actor: Context<Actor>,
) -> Task {
    let task = Task {
        id: ids.next_id(),
        title: format!("{} (by {})", title, actor.name),
        done: false,
    };
    work.stage(Change::Add(task.clone()));
    task
}

/// Remove every task: an administrator's tool, which other actors are not
/// even shown (their view leaves out the `admin` tag).
#[tool(
    key = "tasks.clear",
    effect = destructive,
    tags = ["admin"],
    authorize = admins,
    approve = Actor::approval_ledger
)]
async fn clear_tasks(store: Inject<dyn TaskStore>, work: Inject<UnitOfWork>) -> usize {
    let tasks = store.list();
    for task in &tasks {
        work.stage(Change::Delete(task.id));
    }
    tasks.len()
}

/// Delete a task for good.
#[tool(
    key = "tasks.delete",
    effect = destructive,
    authorize = admins,
    approve = Actor::approval_ledger
)]
async fn delete_task(
    /// The task's identifier.
    id: u64,
    store: Inject<dyn TaskStore>,
    work: Inject<UnitOfWork>,
) -> Result<u64, NoSuchTask> {
    // Staged first: if the call fails below, the unit of work rolls it back.
    work.stage(Change::Delete(id));
    if !store.list().iter().any(|t| t.id == id) {
        return Err(NoSuchTask(id));
    }
    Ok(id)
}

/// The task does not exist.
#[derive(Debug)]
struct NoSuchTask(u64);

impl std::fmt::Display for NoSuchTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "there is no task {}", self.0)
    }
}

impl std::error::Error for NoSuchTask {}

// ------------------------------------------------------------------- start-up

fn container(store: Arc<MemoryStore>) -> Container {
    let for_work = store.clone();
    Container::builder()
        .app::<dyn TaskStore>(store.clone())
        .app::<MemoryStore>(store)
        .request::<UnitOfWork>(move |scope: Scope| {
            let store = for_work.clone();
            async move {
                let work = Arc::new(UnitOfWork {
                    pending: Mutex::new(Vec::new()),
                });
                let finished = work.clone();
                scope.on_close(move |outcome| async move {
                    let changes = std::mem::take(&mut *finished.pending.lock().unwrap());
                    if outcome.is_ok() {
                        println!("    unit of work: commit {} change(s)", changes.len());
                        changes.into_iter().for_each(|c| store.apply(c));
                    } else {
                        println!(
                            "    unit of work: roll back {} change(s) ({outcome:?})",
                            changes.len()
                        );
                    }
                });
                Ok::<_, ResolveError>(work)
            }
        })
        .build()
}

fn print_catalog(catalog: &Catalog) {
    println!(
        "{:<12} {:<14} {:<12} {:<24} description",
        "name", "key", "effect", "inputs"
    );
    println!("{}", "-".repeat(96));
    for tool in catalog {
        let inputs = tool.input_schema()["properties"]
            .as_object()
            .map(|p| p.keys().cloned().collect::<Vec<_>>().join(", "))
            .unwrap_or_default();
        println!(
            "{:<12} {:<14} {:<12} {:<24} {}",
            tool.name(),
            tool.key(),
            tool.effect(),
            inputs,
            tool.description()
        );
    }
}

/// Calls `name` as `who`, through their view, and prints what happened:
/// the id of the request to decide when the call needs approval.
async fn show(executor: &Executor, who: &Actor, name: &str, args: Value) -> Option<ApprovalId> {
    println!("\n> {} calls {name} {args}", who.name);
    // The actor's view: what they are not shown, they cannot call.
    match executor
        .view(who.view.clone())
        .invoke(name, args, who)
        .await
    {
        Ok(result) => println!("  ok: {result}"),
        Err(CallError::ApprovalRequired(request)) => {
            print_request(&request);
            return request.id;
        }
        Err(error @ CallError::InvalidArguments { .. }) => println!("  invalid: {error}"),
        Err(error @ CallError::Tool { .. }) => {
            let cause = std::error::Error::source(&error).map(ToString::to_string);
            println!("  failed: {error}: {}", cause.unwrap_or_default());
        }
        Err(error) => println!("  refused: {error}"),
    }
    None
}

/// Asks whether `who`'s call would run, running nothing: what an agent
/// loop or a UI does before it acts.
async fn preflight(executor: &Executor, who: &Actor, name: &str, args: Value) {
    println!("\n> {} preflights {name} {args}", who.name);
    match executor
        .view(who.view.clone())
        .preflight(name, args, who)
        .await
    {
        Ok(Preflight::WouldRun) => println!("  would run"),
        Ok(Preflight::NeedsApproval(request)) => print_request(&request),
        Ok(Preflight::Denied(error)) | Err(error) => println!("  refused: {error}"),
        Ok(other) => println!("  {other:?}"),
    }
}

fn print_request(request: &ApprovalRequest) {
    let id = request.id.map_or("?".into(), |id| id.to_string());
    println!(
        "  needs approval: request {id} ({} {})",
        request.key, request.arguments
    );
}

/// `by` approves request `id`, under the approvals' rules.
async fn approve(approvals: &Approvals, id: ApprovalId, by: &Actor) {
    println!("\n> {} approves request {id}", by.name);
    match approvals.approve(id, by, "looks right").await {
        Ok(approval) => println!("  {}", approval.status),
        Err(error) => println!("  refused: {error}"),
    }
}

/// What the ledger keeps of request `id`: the audit trail.
async fn audit(approvals: &Approvals, id: ApprovalId) {
    println!("\n> the ledger on request {id}");
    match approvals.get(id).await {
        Ok(approval) => println!(
            "  {} ({}): asked by {}, decided by {}",
            approval.status,
            approval.settlement.map_or("no outcome yet", |s| s.as_str()),
            approval.requested_by,
            approval.decided_by.as_deref().unwrap_or("nobody"),
        ),
        Err(error) => println!("  unavailable: {error}"),
    }
}

/// What the command line asked for.
enum Command {
    Demo,
    Tools(providers::Format),
    Stdio,
    Http {
        addr: std::net::SocketAddr,
        anonymous: bool,
        /// Also serve what the MCP conformance suite asks for.
        conformance: bool,
    },
    Help,
}

const USAGE: &str = "usage: quickstart [--format NAME | --stdio | --http ADDR [--anonymous [--conformance]] | --help]";

const HELP: &str = "\
A shared task list served as tools. Without options, runs a narrated demo.

  --format NAME          print the tools for a model API and exit: openai,
                         openai-strict, openai-responses,
                         openai-responses-strict, anthropic, gemini,
                         gemini-json-schema
  --stdio                serve MCP on stdin/stdout, as the non-admin `local`
  --http ADDR            serve MCP at http://ADDR/mcp; the bearer token
                         `ada-token` is an admin, `bob-token` is not
  --http ADDR --anonymous
                         the same without credentials: every caller is the
                         non-admin `guest` (for clients that cannot send a
                         token); ADDR must be loopback, such as 127.0.0.1:8000
  --http ADDR --anonymous --conformance
                         the same, also serving the fixture tools, resources
                         and prompts the MCP conformance suite asks for
  --help                 print this and exit";

fn parse(args: &[String]) -> Result<Command, String> {
    let http = |text: &str, anonymous, conformance| match text.parse::<std::net::SocketAddr>() {
        Err(e) => Err(format!(
            "`{text}` is not an address such as 127.0.0.1:8000 ({e})"
        )),
        // Anyone who can reach an anonymous endpoint gets in: this one,
        // only from this machine.
        Ok(addr) if anonymous && !addr.ip().is_loopback() => Err(format!(
            "--anonymous serves a loopback address only, such as 127.0.0.1:{}",
            addr.port()
        )),
        Ok(addr) => Ok(Command::Http {
            addr,
            anonymous,
            conformance,
        }),
    };
    match args {
        [] => Ok(Command::Demo),
        [flag, name] if flag == "--format" => {
            name.parse().map(Command::Tools).map_err(|e| format!("{e}"))
        }
        [flag] if flag == "--stdio" => Ok(Command::Stdio),
        [flag, addr] if flag == "--http" => http(addr, false, false),
        [flag, addr, anonymous] if flag == "--http" && anonymous == "--anonymous" => {
            http(addr, true, false)
        }
        [flag, addr, anonymous, conformance]
            if flag == "--http" && anonymous == "--anonymous" && conformance == "--conformance" =>
        {
            http(addr, true, true)
        }
        [flag] if flag == "--help" || flag == "-h" => Ok(Command::Help),
        _ => Err(USAGE.into()),
    }
}

/// Runs the quickstart's command line (arguments without the program name).
pub async fn run(args: Vec<String>) -> ExitCode {
    let command = match parse(&args) {
        Ok(command) => command,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    match execute(command).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("quickstart: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn execute(command: Command) -> Result<(), Box<dyn std::error::Error>> {
    let catalog = Catalog::discover()?;
    let store = Arc::new(MemoryStore::default());
    let approvals = match command {
        // Over MCP the person at the client approves their own agent's
        // writes, when asked through elicitation.
        Command::Stdio | Command::Http { .. } => Approvals::builder(MemoryLedger::new())
            .allow_self_approval()
            .build(),
        // Four eyes and a day to decide: the default rules.
        _ => Approvals::new(MemoryLedger::new()),
    };
    let executor = Executor::builder(catalog.clone(), container(store))
        .approvals(approvals.clone())
        .build()?;
    let ada = Actor {
        name: "ada",
        admin: true,
        view: view_for(true),
    };
    let bob = Actor {
        name: "bob",
        admin: false,
        view: view_for(false),
    };
    match command {
        Command::Tools(format) => {
            let tools = providers::export(&catalog, format)?;
            println!("{}", serde_json::to_string_pretty(&tools)?);
            Ok(())
        }
        Command::Stdio => {
            let local = Actor {
                name: "local",
                admin: false,
                view: view_for(false),
            };
            server(executor).build().serve_stdio(local).await?;
            Ok(())
        }
        Command::Http {
            addr,
            anonymous: false,
            ..
        } => {
            let authenticate =
                move |parts: &mcp::http::request::Parts| match mcp::bearer_token(&parts.headers) {
                    Some("ada-token") => Ok(ada.clone()),
                    Some("bob-token") => Ok(bob.clone()),
                    _ => Err(Rejection::unauthorized()),
                };
            eprintln!("serving MCP at http://{addr}/mcp (bearer token: ada-token or bob-token)");
            server(executor)
                .build()
                .serve_http(addr, authenticate, HttpOptions::default())
                .await?;
            Ok(())
        }
        Command::Http {
            addr,
            anonymous: true,
            conformance,
        } => {
            // Whoever reaches the port gets in, as a guest who cannot
            // delete and whose writes still wait for approval.
            let guest = Actor {
                name: "guest",
                admin: false,
                view: view_for(false),
            };
            // One principal for every caller: its cap on sessions would be
            // everyone's, and clients that never end theirs (HTTP DELETE),
            // such as the TypeScript SDK's, would soon shut the rest out.
            let mut options = HttpOptions::default();
            options.max_sessions_per_principal = options.max_sessions;
            eprintln!("serving MCP at http://{addr}/mcp (no credentials: every caller is `guest`)");
            let mut server = server(executor.clone());
            if conformance {
                conformance::register_tools(executor.registry()).map_err(|e| e.to_string())?;
                server = conformance::with_fixtures(server);
            }
            server
                .build()
                .serve_http(addr, mcp::allow_anonymous(guest), options)
                .await?;
            Ok(())
        }
        Command::Help => {
            println!("{USAGE}\n\n{HELP}");
            Ok(())
        }
        Command::Demo => {
            demo(&catalog, &executor, &approvals, &ada, &bob).await;
            Ok(())
        }
    }
}

fn server(executor: Executor) -> McpServerBuilder<Actor> {
    McpServer::builder(executor, "toolwright-quickstart", env!("CARGO_PKG_VERSION"))
        .instructions(
            "A shared task list. Writes need another person's approval; deleting needs an administrator.",
        )
        .views(|actor: &Actor| actor.view.clone())
        // A client that can ask its person (elicitation) approves a write
        // there; any other gets the request to decide elsewhere.
        .elicitation(std::time::Duration::from_secs(300))
}

async fn demo(
    catalog: &Catalog,
    executor: &Executor,
    approvals: &Approvals,
    ada: &Actor,
    bob: &Actor,
) {
    println!("toolwright quickstart: {} tools\n", catalog.len());
    print_catalog(catalog);

    println!("\n== A write waits for someone else's approval, then runs once");
    let add = json!({"title": "water the plants"});
    if let Some(id) = show(executor, bob, "add_task", add.clone()).await {
        // Asking again, or asking first, finds the same request.
        preflight(executor, bob, "add_task", add.clone()).await;
        approve(approvals, id, bob).await;
        approve(approvals, id, ada).await;
        show(executor, bob, "add_task", add.clone()).await;
        show(executor, bob, "add_task", add).await;
        audit(approvals, id).await;
    }

    println!("\n== Reads, and what the model may not do");
    show(executor, bob, "list_tasks", json!({})).await;
    show(executor, bob, "add_task", json!({"title": ""})).await;
    show(executor, bob, "list_tasks", json!({"store": "mine"})).await;
    show(executor, bob, "delete_task", json!({"id": 1})).await;

    println!("\n== Each actor is shown only their tools, and can call no other");
    for actor in [ada, bob] {
        let names: Vec<_> = executor
            .view(actor.view.clone())
            .tools()
            .iter()
            .map(|tool| tool.name())
            .collect();
        println!("  {} sees {}", actor.name, names.join(", "));
    }
    show(executor, bob, "clear_tasks", json!({})).await;

    println!("\n== A destructive call that fails rolls its unit of work back");
    let missing = json!({"id": 99});
    if let Some(id) = show(executor, ada, "delete_task", missing.clone()).await {
        approve(approvals, id, bob).await;
        show(executor, ada, "delete_task", missing).await;
        audit(approvals, id).await;
    }

    println!("\n== The same tool with the right arguments");
    let first = json!({"id": 1});
    if let Some(id) = show(executor, ada, "delete_task", first.clone()).await {
        approve(approvals, id, bob).await;
        show(executor, ada, "delete_task", first).await;
    }
    show(executor, ada, "list_tasks", json!({})).await;
}

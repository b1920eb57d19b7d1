//! The toolwright quickstart: a shared task list served as tools.
//!
//! This file is the application: the tasks, who calls, the hooks, the
//! tools, and the container that injects an APP service and a
//! REQUEST-scoped unit of work whose finalizer commits or rolls back.
//! [`run`] is its command line (`--help`); [`mcp_server`] serves it over MCP.
//!
//! Writes go through the library's approvals: a call records a request in
//! a ledger, someone other than the requester approves it, the requester's
//! identical call runs once, and the ledger keeps how it ended. Each actor
//! has a view: administrators see every tool, others are not shown the
//! `admin`-tagged one and cannot call it.

mod cli;
mod demo;
mod server;

pub use cli::run;
pub use server::{mcp_server, serve_anonymous};

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use toolwright::{
    BoxError, Catalog, Container, Context, Executor, Inject, Invocation, Principal,
    approval::Approvals,
    registry::{Selector, View},
    scope::{ResolveError, Scope},
    tool,
};

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
            Change::Add(task) => tasks.insert(task.id, task),
            Change::Delete(id) => tasks.remove(&id),
        };
    }
}

/// A REQUEST value: the changes of one call, applied only if the call succeeds.
#[derive(Default)]
struct UnitOfWork(Mutex<Vec<Change>>);

impl UnitOfWork {
    fn stage(&self, change: Change) {
        self.0.lock().unwrap().push(change);
    }
}

/// Who is calling: never supplied by a model, always by the application.
#[derive(Clone)]
pub struct Actor {
    name: &'static str,
    admin: bool,
    /// The tools this actor is shown and may call at all.
    view: View,
}

impl Actor {
    /// `name`, an administrator (who sees every tool) or not (all but the
    /// `admin`-tagged ones); the hooks still decide what a visible tool allows.
    pub fn new(name: &'static str, admin: bool) -> Actor {
        let view = if admin {
            View::new(Selector::All)
        } else {
            View::new(!Selector::tag("admin"))
        };
        Actor { name, admin, view }
    }
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

/// Any signed-in actor may use the tool.
async fn members<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    !actor.name.is_empty()
}

/// Only administrators may use the tool.
async fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.has_role("admin")
}

/// List every task on the shared list.
#[tool(key = "tasks.list", effect = read, authorize = members)]
async fn list_tasks(
    /// Only tasks whose title contains this text.
    contains: Option<String>,
    store: Inject<dyn TaskStore>,
) -> Vec<Task> {
    let needle = contains.unwrap_or_default();
    let mut tasks = store.list();
    tasks.retain(|t| t.title.contains(&needle));
    tasks
}

/// Add a task to the shared list.
#[tool(key = "tasks.add", effect = write, authorize = members, approve = Actor::approval_ledger)]
async fn add_task(
    /// What needs doing.
    #[schemars(length(min = 1, max = 80))]
    title: String,
    ids: Inject<MemoryStore>,
    work: Inject<UnitOfWork>,
    actor: Context<Actor>,
) -> Task {
    let id = ids.next_id.fetch_add(1, Ordering::SeqCst) + 1;
    let title = format!("{title} (by {})", actor.name);
    let task = Task {
        id,
        title,
        done: false,
    };
    work.stage(Change::Add(task.clone()));
    task
}

/// Remove every task: an administrator's tool, which other actors are not
/// even shown (their view leaves out the `admin` tag).
#[tool(key = "tasks.clear", effect = destructive, tags = ["admin"], authorize = admins, approve = Actor::approval_ledger)]
async fn clear_tasks(store: Inject<dyn TaskStore>, work: Inject<UnitOfWork>) -> usize {
    let tasks = store.list();
    for task in &tasks {
        work.stage(Change::Delete(task.id));
    }
    tasks.len()
}

/// Delete a task for good.
#[tool(key = "tasks.delete", effect = destructive, authorize = admins, approve = Actor::approval_ledger)]
async fn delete_task(
    /// The task's identifier.
    id: u64,
    store: Inject<dyn TaskStore>,
    work: Inject<UnitOfWork>,
) -> Result<u64, BoxError> {
    // Staged first: if the call fails below, the unit of work rolls it back.
    work.stage(Change::Delete(id));
    if store.list().iter().any(|t| t.id == id) {
        Ok(id)
    } else {
        Err(format!("there is no task {id}").into())
    }
}

/// The executor of every tool linked in, with a task store for all calls,
/// a unit of work per call that commits only if the call succeeds, and
/// `approvals` deciding the writes.
pub fn executor(approvals: Approvals) -> Result<Executor, BoxError> {
    let store = Arc::new(MemoryStore::default());
    let for_work = store.clone();
    let container = Container::builder()
        .app::<dyn TaskStore>(store.clone())
        .app::<MemoryStore>(store)
        .request::<UnitOfWork>(move |scope: Scope| {
            let store = for_work.clone();
            async move {
                let work = Arc::new(UnitOfWork::default());
                let finished = work.clone();
                scope.on_close(move |outcome| async move {
                    let changes = std::mem::take(&mut *finished.0.lock().unwrap());
                    let count = changes.len();
                    if outcome.is_ok() {
                        println!("    unit of work: commit {count} change(s)");
                        changes.into_iter().for_each(|c| store.apply(c));
                    } else {
                        println!("    unit of work: roll back {count} change(s) ({outcome:?})");
                    }
                });
                Ok::<_, ResolveError>(work)
            }
        })
        .build();
    let executor = Executor::builder(Catalog::discover()?, container).approvals(approvals);
    Ok(executor.build()?)
}

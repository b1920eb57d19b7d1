//! The soak's tools, and the REQUEST-scoped dependency each of them injects.

use std::sync::Arc;
use std::time::Duration;

use toolwright::{
    Catalog, CatalogError, Container, Inject, Invocation,
    scope::{ResolveError, Scope},
    tool,
};

use crate::calls::CALL_KIND;
use crate::ledger::Ledger;

/// The caller's context: only administrators may call [`echo`].
pub(crate) struct Caller {
    /// Whether the caller is an administrator.
    pub(crate) admin: bool,
}

/// The `authorize` hook of [`echo`].
async fn admins<A>(caller: &Caller, _: &Invocation<'_, A>) -> bool {
    caller.admin
}

/// The message of [`explode`]'s panic; the soak's panic hook keeps it quiet.
pub(crate) const DELIBERATE_PANIC: &str = "soak: a deliberate panic";

/// How long the tools that are meant to be cancelled would sleep: far
/// beyond any deadline, so that a starved task can never see them finish.
const FOREVER: Duration = Duration::from_secs(3600);

/// The error [`fail`] returns.
#[derive(Debug)]
pub(crate) struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("refused, as this tool always does")
    }
}

impl std::error::Error for Refused {}

/// What [`echo`] answers.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(crate) struct Echo {
    /// The number after the one sent.
    next: u64,
}

/// Answer with the number after `n`.
#[tool(key = "soak.echo", effect = read, authorize = admins)]
pub(crate) async fn echo(
    /// Any number below 1000.
    #[schemars(range(max = 999))]
    n: u64,
    _probe: Inject<Probe>,
) -> Echo {
    Echo { next: n + 1 }
}

/// Fail with an error.
#[tool(key = "soak.fail", effect = read, authorize = public)]
pub(crate) async fn fail(_probe: Inject<Probe>) -> Result<u64, Refused> {
    Err(Refused)
}

/// Panic.
#[tool(key = "soak.explode", effect = read, authorize = public)]
pub(crate) async fn explode(_probe: Inject<Probe>) -> u64 {
    panic!("{}", DELIBERATE_PANIC)
}

/// Sleep far past this tool's timeout.
#[tool(key = "soak.stall", effect = read, authorize = public, timeout = "1ms")]
pub(crate) async fn stall(_probe: Inject<Probe>) -> u64 {
    tokio::time::sleep(FOREVER).await;
    0
}

/// Sleep until the caller gives up.
#[tool(key = "soak.linger", effect = read, authorize = public)]
pub(crate) async fn linger(_probe: Inject<Probe>) -> u64 {
    tokio::time::sleep(FOREVER).await;
    0
}

// Public tools that inject nothing take the executor's direct path (no
// hook, no scope); these four end their calls the ways the tools above do.

/// Answer with the number after `n`.
#[tool(key = "soak.next", effect = read, authorize = public)]
pub(crate) async fn next(n: u64) -> u64 {
    n + 1
}

/// Panic, with nothing injected.
#[tool(key = "soak.explode_direct", effect = read, authorize = public)]
pub(crate) async fn explode_direct() -> u64 {
    panic!("{}", DELIBERATE_PANIC)
}

/// Sleep far past this tool's timeout, with nothing injected.
#[tool(key = "soak.stall_direct", effect = read, authorize = public, timeout = "1ms")]
pub(crate) async fn stall_direct() -> u64 {
    tokio::time::sleep(FOREVER).await;
    0
}

/// Sleep until the caller gives up, with nothing injected.
#[tool(key = "soak.linger_direct", effect = read, authorize = public)]
pub(crate) async fn linger_direct() -> u64 {
    tokio::time::sleep(FOREVER).await;
    0
}

/// The soak's nine tools.
pub(crate) fn catalog() -> Result<Catalog, CatalogError> {
    Catalog::builder()
        .register::<EchoArgs>()
        .register::<FailArgs>()
        .register::<ExplodeArgs>()
        .register::<StallArgs>()
        .register::<LingerArgs>()
        .register::<NextArgs>()
        .register::<ExplodeDirectArgs>()
        .register::<StallDirectArgs>()
        .register::<LingerDirectArgs>()
        .build()
}

/// The REQUEST-scoped dependency every tool injects, as a transaction would
/// be: built once for each call that gets as far as its body, and closed by
/// a finalizer that receives the call's outcome.
pub(crate) struct Probe {
    ledger: Arc<Ledger>,
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.ledger.released();
    }
}

/// The container: one REQUEST provider, for [`Probe`], that records each
/// build in `ledger` and registers a finalizer recording each close.
pub(crate) fn container(ledger: Arc<Ledger>) -> Container {
    Container::builder()
        .request::<Probe>(move |scope: Scope| {
            let ledger = ledger.clone();
            async move {
                // Polled by the caller's task: the kind of call it is making.
                let kind = CALL_KIND.try_with(|kind| *kind).ok();
                ledger.built(kind);
                let closing = ledger.clone();
                // A finalizer that waits, as one that commits would: a
                // caller may drop the call while it runs.
                scope.on_close(move |outcome| async move {
                    tokio::task::yield_now().await;
                    closing.finalized(kind, outcome);
                });
                Ok::<_, ResolveError>(Probe { ledger })
            }
        })
        .build()
}

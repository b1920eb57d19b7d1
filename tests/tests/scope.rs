//! REQUEST scopes: providers built lazily once per call, finalizers run
//! exactly once with the call's outcome, whatever that outcome is.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Executor, Inject,
    executor::ExecutorProblem,
    scope::{FromScope, Outcome, Requirement, ResolveError, Scope},
    tool,
};

/// One unit of work per call: records how it was closed.
struct Tx {
    id: usize,
}

/// A second request value, built from the first.
struct Audit {
    tx_id: usize,
}

/// What the container saw: how many values were built, and every close.
#[derive(Default)]
struct Journal {
    built: AtomicUsize,
    closed: Mutex<Vec<(String, Outcome)>>,
}

impl Journal {
    fn closes(&self) -> Vec<(String, Outcome)> {
        self.closed.lock().unwrap().clone()
    }
}

fn container(journal: &Arc<Journal>) -> Container {
    let for_tx = journal.clone();
    let for_audit = journal.clone();
    Container::builder()
        .request::<Tx>(move |scope: Scope| {
            let journal = for_tx.clone();
            async move {
                let id = journal.built.fetch_add(1, Ordering::SeqCst);
                // Give concurrent resolvers a chance to race.
                tokio::task::yield_now().await;
                let on_close = journal.clone();
                scope.on_close(move |outcome| async move {
                    on_close.closed.lock().unwrap().push(("tx".into(), outcome));
                });
                Ok::<_, ResolveError>(Tx { id })
            }
        })
        .request::<Audit>(move |scope: Scope| {
            let journal = for_audit.clone();
            async move {
                let tx = scope.resolve::<Tx>().await?;
                journal.built.fetch_add(1, Ordering::SeqCst);
                let on_close = journal.clone();
                scope.on_close(move |outcome| async move {
                    on_close
                        .closed
                        .lock()
                        .unwrap()
                        .push(("audit".into(), outcome));
                });
                Ok::<_, ResolveError>(Audit { tx_id: tx.id })
            }
        })
        .build()
}

/// What the test asks the tool to do.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema, Clone, Copy, Debug)]
#[serde(rename_all = "snake_case")]
enum Behaviour {
    Succeed,
    Fail,
    Panic,
    Hang,
}

#[derive(Debug)]
struct Refused;

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("refused")
    }
}

impl std::error::Error for Refused {}

/// Do some work in a transaction.
#[tool(key = "work.do", effect = read, authorize = public, timeout = "100ms")]
async fn work(behaviour: Behaviour, tx: Inject<Tx>, again: Inject<Tx>) -> Result<usize, Refused> {
    assert_eq!(tx.id, again.id, "one Tx per call");
    match behaviour {
        Behaviour::Succeed => Ok(tx.id),
        Behaviour::Fail => Err(Refused),
        Behaviour::Panic => panic!("the tool broke"),
        Behaviour::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            Ok(tx.id)
        }
    }
}

/// Wait forever in a transaction (no timeout: only the caller can stop it).
#[tool(key = "work.linger", effect = read, authorize = public)]
async fn linger(tx: Inject<Tx>) -> usize {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    tx.id
}

/// Resolve two request values concurrently.
#[tool(key = "work.audit", effect = read, authorize = public)]
async fn audit(#[inject] both: Both) -> usize {
    both.0.id + both.1.tx_id
}

/// Resolves `Tx` and `Audit` at the same time, so both race to build `Tx`.
struct Both(Arc<Tx>, Arc<Audit>);

impl FromScope for Both {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        let (tx, audit) = tokio::join!(scope.resolve::<Tx>(), scope.resolve::<Audit>());
        Ok(Both(tx?, audit?))
    }

    fn requirements(out: &mut Vec<Requirement>) {
        out.push(Requirement::of::<Tx>());
        out.push(Requirement::of::<Audit>());
    }
}

/// A tool whose dependency nobody provides.
#[tool(key = "work.orphan", effect = read, authorize = public)]
async fn orphan(clock: Inject<dyn Fn() -> u64 + Send + Sync>) -> u64 {
    clock()
}

fn executor(journal: &Arc<Journal>) -> Executor {
    let catalog = Catalog::builder()
        .register::<WorkArgs>()
        .register::<AuditArgs>()
        .register::<LingerArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, container(journal)).unwrap()
}

async fn run(behaviour: &str) -> (Result<serde_json::Value, CallError>, Arc<Journal>) {
    let journal = Arc::new(Journal::default());
    let result = executor(&journal)
        .invoke("work", json!({ "behaviour": behaviour }), &())
        .await;
    (result, journal)
}

#[tokio::test]
async fn finalizer_sees_ok_after_success() {
    let (result, journal) = run("succeed").await;
    assert!(result.is_ok());
    assert_eq!(journal.closes(), [("tx".to_owned(), Outcome::Ok)]);
}

#[tokio::test]
async fn finalizer_sees_error_after_a_tool_error() {
    let (result, journal) = run("fail").await;
    assert!(matches!(result, Err(CallError::Tool { .. })));
    assert_eq!(journal.closes(), [("tx".to_owned(), Outcome::Error)]);
}

#[tokio::test]
async fn finalizer_sees_panicked_after_a_panic() {
    let (result, journal) = run("panic").await;
    match result {
        Err(CallError::Panicked { message, .. }) => assert_eq!(message, "the tool broke"),
        other => panic!("expected Panicked, got {other:?}"),
    }
    assert_eq!(journal.closes(), [("tx".to_owned(), Outcome::Panicked)]);
}

#[tokio::test]
async fn finalizer_runs_before_invoke_returns_on_timeout() {
    let (result, journal) = run("hang").await;
    assert!(
        matches!(result, Err(CallError::Timeout { after, .. }) if after == Duration::from_millis(100))
    );
    assert_eq!(journal.closes(), [("tx".to_owned(), Outcome::Cancelled)]);
}

#[tokio::test]
async fn finalizer_runs_once_when_the_caller_drops_the_call() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    let call = exec.invoke("linger", json!({}), &());
    // Poll long enough for the scope to open and the Tx to be built, then drop.
    let dropped = tokio::time::timeout(Duration::from_millis(20), call).await;
    assert!(dropped.is_err(), "the call was still running");
    assert_eq!(journal.built.load(Ordering::SeqCst), 1);
    // The finalizers were handed to the runtime; give it a moment.
    for _ in 0..100 {
        if !journal.closes().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(journal.closes(), [("tx".to_owned(), Outcome::Cancelled)]);
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(journal.closes().len(), 1, "exactly once");
}

/// A request value whose two finalizers end a call: the newer one, which
/// runs first, waits until the test lets it go.
struct Held;

/// What `Held`'s finalizers did: each records when it starts and ends.
#[derive(Default)]
struct Closing {
    events: Mutex<Vec<(&'static str, Outcome)>>,
    release: tokio::sync::Notify,
}

impl Closing {
    fn events(&self) -> Vec<(&'static str, Outcome)> {
        self.events.lock().unwrap().clone()
    }

    fn record(&self, event: &'static str, outcome: Outcome) {
        self.events.lock().unwrap().push((event, outcome));
    }
}

/// Use a value whose finalizers take their time.
#[tool(key = "work.hold", effect = read, authorize = public)]
async fn hold(_held: Inject<Held>) -> bool {
    true
}

#[tokio::test]
async fn finalizers_still_run_once_each_when_the_caller_drops_the_call_while_they_run() {
    let closing = Arc::new(Closing::default());
    let for_provider = closing.clone();
    let container = Container::builder()
        .request::<Held>(move |scope: Scope| {
            let older = for_provider.clone();
            let newer = for_provider.clone();
            async move {
                scope.on_close(move |outcome| async move { older.record("older ran", outcome) });
                scope.on_close(move |outcome| async move {
                    newer.record("newer started", outcome);
                    newer.release.notified().await;
                    newer.record("newer ended", outcome);
                });
                Ok::<_, ResolveError>(Held)
            }
        })
        .build();
    let catalog = Catalog::builder().register::<HoldArgs>().build().unwrap();
    let exec = Executor::new(catalog, container).unwrap();

    // The body returns at once; the call then waits in the newer finalizer.
    let call = exec.invoke("hold", json!({}), &());
    let dropped = tokio::time::timeout(Duration::from_millis(50), call).await;
    assert!(dropped.is_err(), "the call was still closing its scope");
    assert_eq!(closing.events(), [("newer started", Outcome::Ok)]);

    // The caller is gone; what was left of the close goes on without it.
    closing.release.notify_one();
    for _ in 0..200 {
        if closing.events().len() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(
        closing.events(),
        [
            ("newer started", Outcome::Ok),
            ("newer ended", Outcome::Ok),
            ("older ran", Outcome::Ok),
        ],
        "the running finalizer finishes, the rest run, each exactly once, with the call's outcome"
    );
}

#[tokio::test]
async fn a_provider_resolved_twice_in_one_call_is_built_once() {
    let (result, journal) = run("succeed").await;
    assert!(result.is_ok());
    assert_eq!(journal.built.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn concurrent_resolution_builds_once_and_finalizers_run_newest_first() {
    let journal = Arc::new(Journal::default());
    let result = executor(&journal).invoke("audit", json!({}), &()).await;
    assert_eq!(result.unwrap(), json!(0));
    assert_eq!(
        journal.built.load(Ordering::SeqCst),
        2,
        "one Tx and one Audit"
    );
    assert_eq!(
        journal.closes(),
        [
            ("audit".to_owned(), Outcome::Ok),
            ("tx".to_owned(), Outcome::Ok)
        ]
    );
}

#[tokio::test]
async fn each_call_gets_its_own_scope() {
    let journal = Arc::new(Journal::default());
    let exec = executor(&journal);
    let first = exec
        .invoke("work", json!({"behaviour": "succeed"}), &())
        .await;
    let second = exec
        .invoke("work", json!({"behaviour": "succeed"}), &())
        .await;
    assert_eq!(first.unwrap(), json!(0));
    assert_eq!(second.unwrap(), json!(1));
    assert_eq!(journal.closes().len(), 2);
}

#[test]
fn a_missing_provider_fails_executor_construction() {
    let catalog = Catalog::builder().register::<OrphanArgs>().build().unwrap();
    let error = Executor::new(catalog, Container::default()).unwrap_err();
    match error.problems.as_slice() {
        [
            ExecutorProblem::MissingProvider {
                tool,
                location,
                type_name,
            },
        ] => {
            assert_eq!(*tool, "work.orphan");
            assert!(location.file.ends_with("scope.rs"), "{location}");
            assert_eq!(location.module_path, "scope");
            assert!(type_name.contains("Fn() -> u64"), "{type_name}");
        }
        other => panic!("expected one MissingProvider, got {other:?}"),
    }
    let message = error.to_string();
    assert!(
        message.contains("work.orphan") && message.contains("scope.rs:"),
        "{message}"
    );
}

#[test]
fn every_missing_provider_is_reported_at_once() {
    let catalog = Catalog::builder()
        .register::<OrphanArgs>()
        .register::<WorkArgs>()
        .register::<AuditArgs>()
        .build()
        .unwrap();
    let error = Executor::new(catalog, Container::default()).unwrap_err();
    // audit needs Tx and Audit, orphan needs the clock, work needs Tx.
    assert_eq!(error.problems.len(), 4, "{error}");
    let tools: Vec<_> = error
        .problems
        .iter()
        .map(|p| match p {
            ExecutorProblem::MissingProvider { tool, .. } => tool.as_str(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        tools,
        ["work.audit", "work.audit", "work.do", "work.orphan"]
    );
}

/// A value of each of three request types.
struct First(&'static str);
struct Second(&'static str);
struct Third(&'static str);

/// Which provider built each value.
#[tool(key = "scope.which", effect = read, authorize = public)]
async fn which(a: Inject<First>, b: Inject<Second>, c: Inject<Third>) -> String {
    format!("{} {} {}", a.0, b.0, c.0)
}

#[tokio::test]
async fn each_request_type_gets_its_own_value_and_a_later_provider_replaces_an_earlier_one() {
    let container = Container::builder()
        .request::<First>(|_: Scope| async { Ok::<_, ResolveError>(First("first")) })
        .request::<Second>(|_: Scope| async { Ok::<_, ResolveError>(Second("old")) })
        .request::<Third>(|_: Scope| async { Ok::<_, ResolveError>(Third("third")) })
        .request::<Second>(|_: Scope| async { Ok::<_, ResolveError>(Second("second")) })
        .build();
    assert!(format!("{container:?}").contains("request_providers"));
    let catalog = Catalog::builder().register::<WhichArgs>().build().unwrap();
    let executor = Executor::new(catalog, container).unwrap();
    let built = executor.invoke("which", json!({}), &()).await.unwrap();
    assert_eq!(built, json!("first second third"));
}

/// A request value whose builds are numbered from 0. Build 0 fails after
/// a yield when `fail_first`, or never finishes when `hang_first`.
struct Numbered(usize);

/// What a tool saw of [`Numbered`]: each ask, the build number it got or
/// its error.
struct Asks(Vec<Result<usize, String>>);

impl FromScope for Asks {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        // Each ask bounded, so that a cell left claimed, or a waiter never
        // woken, fails the test instead of hanging it.
        let ask = || async {
            match tokio::time::timeout(Duration::from_secs(5), scope.resolve::<Numbered>()).await {
                Ok(asked) => asked
                    .map(|value| value.0)
                    .map_err(|error| error.to_string()),
                Err(_) => Err("still waiting".to_owned()),
            }
        };
        // Two askers at once: the second waits for the first one's build.
        let (a, b) = tokio::join!(ask(), ask());
        let mut asks = vec![a, b];
        // An ask given up on while it builds (a timeout around it).
        let abandoned =
            tokio::time::timeout(Duration::from_millis(5), scope.resolve::<Numbered>()).await;
        if let Ok(asked) = abandoned {
            asks.push(
                asked
                    .map(|value| value.0)
                    .map_err(|error| error.to_string()),
            );
        }
        asks.push(ask().await);
        Ok(Asks(asks))
    }

    fn requirements(out: &mut Vec<Requirement>) {
        out.push(Requirement::of::<Numbered>());
    }
}

/// Report how the asks for a [`Numbered`] went.
#[tool(key = "scope.asks", effect = read, authorize = public)]
async fn asks(#[inject] seen: Asks) -> Vec<Result<usize, String>> {
    seen.0
}

/// An executor whose `Numbered` provider fails (`fail`) or hangs on the
/// builds listed.
fn numbered(fail: &'static [usize], hang: &'static [usize]) -> Executor {
    let builds = Arc::new(AtomicUsize::new(0));
    let container = Container::builder()
        .request::<Numbered>(move |_: Scope| {
            let build = builds.fetch_add(1, Ordering::SeqCst);
            async move {
                // Let a second asker find the build under way.
                tokio::task::yield_now().await;
                if hang.contains(&build) {
                    std::future::pending::<()>().await;
                }
                if fail.contains(&build) {
                    return Err(ResolveError::Missing { type_name: "build" });
                }
                Ok::<_, ResolveError>(Numbered(build))
            }
        })
        .build();
    let catalog = Catalog::builder().register::<AsksArgs>().build().unwrap();
    Executor::new(catalog, container).unwrap()
}

#[tokio::test]
async fn a_waiting_asker_gets_the_value_being_built() {
    let asks = numbered(&[], &[]).invoke("asks", json!({}), &()).await;
    // One build, seen by every ask.
    assert_eq!(
        asks.unwrap(),
        json!([{"Ok": 0}, {"Ok": 0}, {"Ok": 0}, {"Ok": 0}])
    );
}

#[tokio::test]
async fn a_failed_build_is_the_askers_error_and_the_next_asker_builds_again() {
    let asks = numbered(&[0], &[]).invoke("asks", json!({}), &()).await;
    let asks = asks.unwrap().as_array().unwrap().clone();
    assert!(
        asks[0]["Err"].as_str().unwrap().contains("failed"),
        "{asks:?}"
    );
    // The asker that was waiting for build 0 made build 1.
    assert_eq!(
        asks[1..],
        [json!({"Ok": 1}), json!({"Ok": 1}), json!({"Ok": 1})]
    );
}

#[tokio::test]
async fn a_build_given_up_on_is_made_again_by_the_next_asker() {
    // Build 2 never ends: its asker gives up, and the next one builds.
    let asks = numbered(&[0, 1], &[2]).invoke("asks", json!({}), &()).await;
    let asks = asks.unwrap().as_array().unwrap().clone();
    assert!(
        asks[0]["Err"].is_string() && asks[1]["Err"].is_string(),
        "{asks:?}"
    );
    assert_eq!(asks[2..], [json!({"Ok": 3})]);
}

/// A request type per `N`, holding what its provider put in.
struct Nth<const N: usize>(usize);

/// Read the values of the first and the sixth provider of a container.
#[tool(key = "scope.ends", effect = read, authorize = public)]
async fn ends(first: Inject<Nth<0>>, sixth: Inject<Nth<5>>) -> (usize, usize) {
    (first.0, sixth.0)
}

#[tokio::test]
async fn a_container_of_many_providers_builds_each_value_in_its_own_slot() {
    fn nth<const N: usize>(
        builder: toolwright::scope::ContainerBuilder,
    ) -> toolwright::scope::ContainerBuilder {
        builder.request::<Nth<N>>(|_: Scope| async { Ok::<_, ResolveError>(Nth::<N>(N * 10)) })
    }
    let builder = Container::builder();
    let builder = nth::<5>(nth::<4>(nth::<3>(nth::<2>(nth::<1>(nth::<0>(builder))))));
    let catalog = Catalog::builder().register::<EndsArgs>().build().unwrap();
    let executor = Executor::new(catalog, builder.build()).unwrap();
    let ends = executor.invoke("ends", json!({}), &()).await.unwrap();
    assert_eq!(ends, json!([0, 50]));
}

/// Say which `Tx` the call got.
#[tool(key = "scope.which_tx", effect = read, authorize = public)]
async fn which_tx(tx: Inject<Tx>) -> usize {
    tx.id
}

#[tokio::test]
async fn an_app_value_wins_over_a_request_provider_of_its_type_in_either_order() {
    let provider = |_: Scope| async { Ok::<_, ResolveError>(Tx { id: 1 }) };
    for container in [
        Container::builder()
            .request::<Tx>(provider)
            .app(Arc::new(Tx { id: 7 }))
            .build(),
        Container::builder()
            .app(Arc::new(Tx { id: 7 }))
            .request::<Tx>(provider)
            .build(),
    ] {
        let catalog = Catalog::builder()
            .register::<WhichTxArgs>()
            .build()
            .unwrap();
        let executor = Executor::new(catalog, container).unwrap();
        assert_eq!(
            executor.invoke("which_tx", json!({}), &()).await.unwrap(),
            json!(7)
        );
    }
}

/// Who may do guarded work: `true` lets the caller in.
async fn allowed_in<A>(allowed: &bool, _: &toolwright::Invocation<'_, A>) -> bool {
    *allowed
}

/// Approval of a write: never given, always waiting for a person.
async fn waits_for_a_person<A>(
    _: &bool,
    _: &toolwright::Invocation<'_, A>,
) -> toolwright::executor::Verdict {
    toolwright::executor::Verdict::Pending
}

/// Work in a transaction, behind an `authorize` hook.
#[tool(key = "work.guarded", effect = read, authorize = allowed_in)]
async fn guarded_work(tx: Inject<Tx>) -> usize {
    tx.id
}

/// Write in a transaction, once a person approves.
#[tool(key = "work.write", effect = write, authorize = allowed_in, approve = waits_for_a_person)]
async fn write_work(tx: Inject<Tx>) -> usize {
    tx.id
}

#[tokio::test]
async fn a_call_its_hooks_refuse_builds_no_request_value() {
    let journal = Arc::new(Journal::default());
    let catalog = Catalog::builder()
        .register::<GuardedWorkArgs>()
        .register::<WriteWorkArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, container(&journal)).unwrap();
    let denied = executor.invoke("guarded_work", json!({}), &false).await;
    assert!(
        matches!(denied, Err(CallError::Denied { .. })),
        "{denied:?}"
    );
    let pending = executor.invoke("write_work", json!({}), &true).await;
    assert!(
        matches!(pending, Err(CallError::ApprovalRequired(_))),
        "{pending:?}"
    );
    // Nothing was built, so nothing was closed.
    assert_eq!(journal.built.load(Ordering::SeqCst), 0);
    assert!(journal.closes().is_empty());
    // Let in, the same call builds its transaction and closes it.
    let allowed = executor.invoke("guarded_work", json!({}), &true).await;
    assert_eq!(allowed.unwrap(), json!(0));
    assert_eq!(journal.closes(), [("tx".to_owned(), Outcome::Ok)]);
}

/// REQUEST types whose providers ask for each other ([`Hen`] and [`Egg`]),
/// for their own type ([`Ouroboros`]), or for one they share ([`Straw`],
/// asked for by [`Nest`] and [`Perch`]).
struct Hen;
struct Egg;
struct Ouroboros;
struct Straw(usize);
struct Nest(usize);
struct Perch(usize);

/// Each provider first lets the others' builds start, so that when it
/// asks, the value it asks for may be under way in another build.
fn tangled() -> Container {
    let straws = Arc::new(AtomicUsize::new(0));
    Container::builder()
        .request::<Hen>(|scope: Scope| async move {
            tokio::task::yield_now().await;
            scope.resolve::<Egg>().await?;
            Ok::<_, ResolveError>(Hen)
        })
        .request::<Egg>(|scope: Scope| async move {
            tokio::task::yield_now().await;
            scope.resolve::<Hen>().await?;
            Ok::<_, ResolveError>(Egg)
        })
        .request::<Ouroboros>(|scope: Scope| async move {
            scope.resolve::<Ouroboros>().await?;
            Ok::<_, ResolveError>(Ouroboros)
        })
        .request::<Straw>(move |_: Scope| {
            let built = straws.fetch_add(1, Ordering::SeqCst);
            async move {
                tokio::task::yield_now().await;
                Ok::<_, ResolveError>(Straw(built))
            }
        })
        .request::<Nest>(|scope: Scope| async move {
            tokio::task::yield_now().await;
            Ok::<_, ResolveError>(Nest(scope.resolve::<Straw>().await?.0))
        })
        .request::<Perch>(|scope: Scope| async move {
            tokio::task::yield_now().await;
            Ok::<_, ResolveError>(Perch(scope.resolve::<Straw>().await?.0))
        })
        .build()
}

/// The cycle an error reports, found along its sources.
fn cycle_in(error: &(dyn std::error::Error + 'static)) -> Option<Vec<&'static str>> {
    let mut next = Some(error);
    while let Some(error) = next {
        if let Some(ResolveError::Cycle { path, .. }) = error.downcast_ref::<ResolveError>() {
            return Some(path.clone());
        }
        next = error.source();
    }
    None
}

/// Two values asked for at once: what each ask ended with.
struct AtOnce<A, B>(Result<Arc<A>, ResolveError>, Result<Arc<B>, ResolveError>);

impl<A: Send + Sync + 'static, B: Send + Sync + 'static> FromScope for AtOnce<A, B> {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        let (a, b) = tokio::join!(scope.resolve::<A>(), scope.resolve::<B>());
        Ok(AtOnce(a, b))
    }
}

/// Ask for a hen.
#[tool(key = "coop.hen", effect = read, authorize = public)]
async fn hen(_hen: Inject<Hen>) {}

/// Ask for a value whose provider asks for itself.
#[tool(key = "coop.ouroboros", effect = read, authorize = public)]
async fn ouroboros(_it: Inject<Ouroboros>) {}

/// Ask for a hen and an egg at once: the cycle each ask ran into.
#[tool(key = "coop.hen_and_egg", effect = read, authorize = public)]
async fn hen_and_egg(#[inject] both: AtOnce<Hen, Egg>) -> Vec<Vec<String>> {
    let cycle = |error: &ResolveError| cycle_in(error).unwrap_or_default();
    let AtOnce(hen, egg) = both;
    let names = |path: Vec<&str>| path.iter().map(|name| short(name)).collect();
    vec![
        names(cycle(hen.err().as_ref().expect("a hen needs an egg"))),
        names(cycle(egg.err().as_ref().expect("an egg needs a hen"))),
    ]
}

/// Ask for a nest and a perch at once: the straw each was built from.
#[tool(key = "coop.nest_and_perch", effect = read, authorize = public)]
async fn nest_and_perch(#[inject] both: AtOnce<Nest, Perch>) -> Result<(usize, usize), String> {
    let AtOnce(nest, perch) = both;
    Ok((
        nest.map_err(|e| e.to_string())?.0,
        perch.map_err(|e| e.to_string())?.0,
    ))
}

/// A type's name without its module path.
fn short(type_name: &str) -> String {
    type_name
        .rsplit("::")
        .next()
        .unwrap_or(type_name)
        .to_owned()
}

async fn call_coop(tool: &str) -> Result<serde_json::Value, CallError> {
    let catalog = Catalog::builder()
        .register::<HenArgs>()
        .register::<OuroborosArgs>()
        .register::<HenAndEggArgs>()
        .register::<NestAndPerchArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, tangled()).unwrap();
    ended(executor.invoke(tool, json!({}), &())).await
}

/// `call`'s answer: waiting that never ends fails the test instead of
/// hanging it.
async fn ended<F: std::future::Future>(call: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call ended")
}

/// A call that failed on a provider cycle: the type it failed to build,
/// and the cycle among the error's sources (types without their paths).
async fn failed_on_a_cycle(tool: &str) -> (String, Vec<String>) {
    let error = call_coop(tool).await.unwrap_err();
    let CallError::Dependency { type_name, .. } = &error else {
        panic!("{error:?}");
    };
    let path = cycle_in(&error).expect("the cycle is among the error's sources");
    (short(type_name), path.iter().map(|n| short(n)).collect())
}

#[tokio::test]
async fn a_provider_asking_for_its_own_type_fails_the_call_instead_of_waiting() {
    let (failed, cycle) = failed_on_a_cycle("ouroboros").await;
    assert_eq!(failed, "Ouroboros");
    assert_eq!(cycle, ["Ouroboros", "Ouroboros"]);
    let cycle = ResolveError::Cycle {
        type_name: "A",
        path: vec!["A", "B", "A"],
    };
    assert_eq!(
        cycle.to_string(),
        "providers wait for each other: `A` → `B` → `A`"
    );
}

#[tokio::test]
async fn providers_asking_for_each_other_fail_the_call_naming_the_cycle() {
    // The hen's build asked for an egg, whose build asked for the hen.
    let (failed, cycle) = failed_on_a_cycle("hen").await;
    assert_eq!(failed, "Hen");
    assert_eq!(cycle, ["Egg", "Hen", "Egg"]);
}

#[tokio::test]
async fn providers_asking_for_each_other_while_both_build_fail_both_asks() {
    // Both builds are under way when each asks for the other's value.
    let cycles = call_coop("hen_and_egg").await.unwrap();
    let cycles: Vec<Vec<String>> = serde_json::from_value(cycles).unwrap();
    // Which build asks first is the runtime's choice.
    let hen_first = ["Hen", "Egg", "Hen"];
    let egg_first = ["Egg", "Hen", "Egg"];
    assert_eq!(cycles.len(), 2);
    for cycle in &cycles {
        assert!(cycle == &hen_first || cycle == &egg_first, "{cycles:?}");
    }
}

#[tokio::test]
async fn builds_waiting_for_a_shared_value_are_not_a_cycle() {
    // The perch's build waits for the straw the nest's build is making.
    let built = call_coop("nest_and_perch").await.unwrap();
    assert_eq!(built, json!([0, 0]));
}

/// What [`Flaky`]'s builds share: how many began, the handle of the
/// first (which fails), and when the second may end.
#[derive(Default)]
struct Hold {
    builds: AtomicUsize,
    kept: Mutex<Option<Scope>>,
    release: tokio::sync::Notify,
}

/// A REQUEST value whose first build keeps its scope handle and fails,
/// and whose next waits for [`Hold::release`].
struct Flaky;
/// A REQUEST value whose provider asks for a [`Flaky`].
struct Bystander;

fn flaky() -> Container {
    Container::builder()
        .app(Arc::new(Hold::default()))
        .request::<Flaky>(|scope: Scope| async move {
            let hold = scope.resolve::<Hold>().await?;
            if hold.builds.fetch_add(1, Ordering::SeqCst) == 0 {
                *hold.kept.lock().unwrap() = Some(scope);
                return Err("the first build fails".into());
            }
            hold.release.notified().await;
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>(Flaky)
        })
        .request::<Bystander>(|scope: Scope| async move {
            scope.resolve::<Flaky>().await?;
            Ok::<_, ResolveError>(Bystander)
        })
        .build()
}

/// A `Flaky` asked for twice (the first build fails), and, while the
/// second build is under way, a `Bystander` asked for through the handle
/// the first build kept.
struct Retried(Result<(), String>);

impl FromScope for Retried {
    async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
        let hold = scope.resolve::<Hold>().await?;
        assert!(scope.resolve::<Flaky>().await.is_err());
        let kept = hold
            .kept
            .lock()
            .unwrap()
            .take()
            .expect("the first build kept its handle");
        let (again, through_kept, ()) = tokio::join!(
            scope.resolve::<Flaky>(),
            kept.resolve::<Bystander>(),
            async {
                for _ in 0..4 {
                    tokio::task::yield_now().await;
                }
                hold.release.notify_one();
            }
        );
        let both = again.map(drop).and(through_kept.map(drop));
        Ok(Retried(both.map_err(|e| e.to_string())))
    }
}

/// Retry a failed build while its old handle is still in use. (The
/// parameter is named like the fn on purpose: it does not hide the fn.)
#[tool(key = "coop.retried", effect = read, authorize = public)]
async fn retried(#[inject] retried: Retried) -> Result<(), String> {
    retried.0
}

#[tokio::test]
async fn a_handle_kept_past_its_failed_build_does_not_make_a_cycle() {
    // The kept handle's build failed; the `Bystander` it asks for waits
    // for the second build of `Flaky`, which waits for nothing of its:
    // not a cycle.
    let catalog = Catalog::builder()
        .register::<RetriedArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, flaky()).unwrap();
    let result = ended(executor.invoke("retried", json!({}), &())).await;
    assert_eq!(result.unwrap(), json!(null));
}

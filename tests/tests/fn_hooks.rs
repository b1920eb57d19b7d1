//! Hooks that are plain `fn`s returning a `Verdict`: they answer at once,
//! with no future to wait for. The rules are those of `async`
//! hooks: asked once, on the validated arguments, before the body, and
//! nothing runs unless they let the call through.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Context, Executor, Inject, Invocation,
    executor::Verdict,
    scope::{ResolveError, Scope},
    tool,
};

/// The caller: what its hooks answer, and counts of what ran for it
/// (shared: a `Context<Actor>` parameter gets a clone).
#[derive(Clone)]
struct Actor {
    authorize: Verdict,
    approve: Verdict,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    /// `authorize` answers so far.
    asked: AtomicUsize,
    /// `approve` answers so far.
    approvals: AtomicUsize,
    /// What the bodies counted so far.
    ran: AtomicUsize,
    /// The largest `by` `may_count` saw.
    seen: AtomicUsize,
}

impl Actor {
    fn new(authorize: Verdict) -> Self {
        Actor {
            authorize,
            approve: Verdict::Allow,
            counts: Arc::default(),
        }
    }

    /// (`authorize` answers, `approve` answers, counted by bodies).
    fn counts(&self) -> (usize, usize, usize) {
        (
            self.counts.asked.load(Ordering::SeqCst),
            self.counts.approvals.load(Ordering::SeqCst),
            self.counts.ran.load(Ordering::SeqCst),
        )
    }
}

/// Any tool: answers what the actor says.
fn may_call<A>(actor: &Actor, _: &Invocation<'_, A>) -> Verdict {
    actor.counts.asked.fetch_add(1, Ordering::SeqCst);
    actor.authorize
}

/// The counting tools: sees their validated arguments.
fn may_count(actor: &Actor, call: &Invocation<'_, CountArgs>) -> Verdict {
    actor.counts.seen.fetch_max(call.by, Ordering::SeqCst);
    may_call(actor, call)
}

fn may_approve<A>(actor: &Actor, _: &Invocation<'_, A>) -> Verdict {
    actor.counts.approvals.fetch_add(1, Ordering::SeqCst);
    actor.approve
}

/// Count (no `.await`: the whole call finishes in its first poll).
#[tool(key = "count.now", effect = read, authorize = may_count)]
async fn count(#[schemars(range(max = 100))] by: usize, actor: Context<Actor>) -> usize {
    actor.counts.ran.fetch_add(by, Ordering::SeqCst) + by
}

/// Count after a wait of `ms`.
#[tool(key = "count.later", effect = read, authorize = may_call, timeout = "50ms")]
async fn count_later(by: usize, ms: u64, actor: Context<Actor>) -> usize {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    actor.counts.ran.fetch_add(by, Ordering::SeqCst) + by
}

/// Record a payment, once approved.
#[tool(key = "count.pay", effect = write, authorize = may_call, approve = may_approve)]
async fn pay(cents: u64, actor: Context<Actor>) -> u64 {
    actor.counts.ran.fetch_add(1, Ordering::SeqCst);
    cents
}

/// A value built for each call that asks for it.
struct Counter(usize);

static BUILT: AtomicUsize = AtomicUsize::new(0);

/// Held by the tests that build `Counter`s, so that each sees its own.
static BUILDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Count with an injected value.
#[tool(key = "count.injected", effect = read, authorize = may_call)]
async fn count_injected(by: usize, counter: Inject<Counter>, actor: Context<Actor>) -> usize {
    actor.counts.ran.fetch_add(by, Ordering::SeqCst) + by + counter.0
}

/// Refuse by panicking.
fn panics<A>(_: &Actor, _: &Invocation<'_, A>) -> Verdict {
    panic!("the policy store is gone")
}

/// Never runs.
#[tool(key = "count.guarded_by_panic", effect = read, authorize = panics)]
async fn guarded_by_panic(actor: Context<Actor>) -> usize {
    actor.counts.ran.fetch_add(1, Ordering::SeqCst)
}

fn executor() -> Executor {
    let catalog = Catalog::discover().expect("no duplicate tools in this test binary");
    let container = Container::builder()
        .request::<Counter>(|_: Scope| async {
            BUILT.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ResolveError>(Counter(0))
        })
        .build();
    Executor::new(catalog, container).expect("every injected type is provided")
}

#[tokio::test]
async fn a_plain_fn_hook_lets_the_call_run_in_its_first_poll() {
    let exec = executor();
    let actor = Actor::new(Verdict::Allow);
    // Not polled: nothing is asked or run.
    drop(exec.invoke("count", json!({"by": 1}), &actor));
    assert_eq!(actor.counts(), (0, 0, 0));

    let mut call = std::pin::pin!(exec.invoke("count", json!({"by": 7}), &actor));
    let mut cx = TaskContext::from_waker(Waker::noop());
    let Poll::Ready(first) = call.as_mut().poll(&mut cx) else {
        panic!("a hook that is a plain fn and a body without `.await` finish in one poll");
    };
    assert_eq!(first.unwrap(), json!(7));
    assert_eq!(actor.counts(), (1, 0, 7));
    // The hook saw the validated arguments.
    assert_eq!(actor.counts.seen.load(Ordering::SeqCst), 7);
    // Polled again, it panics, as a finished future does, and nothing is
    // asked or run again.
    let again =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| call.as_mut().poll(&mut cx)));
    assert!(again.is_err(), "a finished call polled again panics");
    assert_eq!(actor.counts(), (1, 0, 7));
}

#[tokio::test]
async fn a_plain_fn_hook_never_sees_invalid_arguments() {
    let exec = executor();
    let actor = Actor::new(Verdict::Allow);
    for invalid in [json!({"by": 101}), json!({"by": -1}), json!({})] {
        let result = exec.invoke("count", invalid.clone(), &actor).await;
        assert!(
            matches!(result, Err(CallError::InvalidArguments { .. })),
            "{invalid}: {result:?}"
        );
    }
    assert_eq!(actor.counts(), (0, 0, 0));
}

#[tokio::test]
async fn a_call_a_plain_fn_hook_refuses_runs_nothing() {
    let _building = BUILDING.lock().await;
    let exec = executor();
    // `Pending` is for approvals; from `authorize` it refuses too.
    for answer in [Verdict::Deny, Verdict::Pending] {
        let actor = Actor::new(answer);
        for (tool, arguments) in [
            ("count", json!({"by": 1})),
            ("count_later", json!({"by": 1, "ms": 0})),
            ("count_injected", json!({"by": 1})),
            ("pay", json!({"cents": 5})),
        ] {
            let built = BUILT.load(Ordering::SeqCst);
            let denied = exec.invoke(tool, arguments, &actor).await;
            assert!(
                matches!(denied, Err(CallError::Denied { .. })),
                "{tool}, {answer:?}: {denied:?}"
            );
            assert_eq!(
                BUILT.load(Ordering::SeqCst),
                built,
                "{tool}: no REQUEST value"
            );
        }
        assert_eq!(actor.counts(), (4, 0, 0), "{answer:?}: asked once each");
    }
}

#[tokio::test]
async fn a_plain_fn_hook_before_a_body_that_waits() {
    let exec = executor();
    let actor = Actor::new(Verdict::Allow);
    let later = exec
        .invoke("count_later", json!({"by": 2, "ms": 1}), &actor)
        .await;
    assert_eq!(later.unwrap(), json!(2));
    assert_eq!(actor.counts(), (1, 0, 2));

    // The tool's timeout limits its body.
    let slow = exec
        .invoke("count_later", json!({"by": 2, "ms": 2_000}), &actor)
        .await;
    assert!(
        matches!(slow, Err(CallError::Timeout { after, .. }) if after == Duration::from_millis(50)),
        "{slow:?}"
    );
    assert_eq!(actor.counts(), (2, 0, 2));
}

#[tokio::test]
async fn a_plain_fn_hook_guards_an_injecting_tool() {
    let _building = BUILDING.lock().await;
    let exec = executor();
    let actor = Actor::new(Verdict::Allow);
    let built = BUILT.load(Ordering::SeqCst);
    let counted = exec
        .invoke("count_injected", json!({"by": 3}), &actor)
        .await;
    assert_eq!(counted.unwrap(), json!(3));
    assert_eq!(actor.counts(), (1, 0, 3));
    assert_eq!(BUILT.load(Ordering::SeqCst), built + 1);
}

#[tokio::test]
async fn plain_fn_hooks_authorize_and_approve_a_write() {
    let exec = executor();
    let mut actor = Actor::new(Verdict::Allow);
    assert_eq!(
        exec.invoke("pay", json!({"cents": 5}), &actor)
            .await
            .unwrap(),
        json!(5)
    );
    assert_eq!(actor.counts(), (1, 1, 1));

    actor.approve = Verdict::Pending;
    let pending = exec.invoke("pay", json!({"cents": 6}), &actor).await;
    let Err(CallError::ApprovalRequired(request)) = pending else {
        panic!("expected an approval request, got {pending:?}");
    };
    assert_eq!(request.arguments, json!({"cents": 6}));

    actor.approve = Verdict::Deny;
    let refused = exec.invoke("pay", json!({"cents": 7}), &actor).await;
    assert!(
        matches!(refused, Err(CallError::NotApproved { .. })),
        "{refused:?}"
    );
    assert_eq!(
        actor.counts(),
        (3, 3, 1),
        "the body ran for the approved call only"
    );
}

#[tokio::test]
async fn the_typed_call_asks_a_plain_fn_hook_too() {
    let exec = executor();
    let allowed = Actor::new(Verdict::Allow);
    assert_eq!(exec.call(CountArgs { by: 4 }, &allowed).await.unwrap(), 4);
    assert_eq!(allowed.counts(), (1, 0, 4));

    let refused = Actor::new(Verdict::Deny);
    let denied = exec.call(CountArgs { by: 4 }, &refused).await;
    assert!(
        matches!(denied, Err(CallError::Denied { .. })),
        "{denied:?}"
    );
    assert_eq!(refused.counts(), (1, 0, 0));
}

#[tokio::test]
async fn a_plain_fn_hook_with_another_context_type_is_a_clear_error() {
    let exec = executor();
    let result = exec.invoke("count", json!({"by": 1}), &"an actor?").await;
    assert!(
        matches!(&result, Err(CallError::ContextMismatch { .. })),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_plain_fn_hook_that_panics_is_the_calls_error() {
    let exec = executor();
    let actor = Actor::new(Verdict::Allow);
    let result = exec.invoke("guarded_by_panic", json!({}), &actor).await;
    assert!(
        matches!(&result, Err(CallError::Panicked { message, .. })
            if message.contains("the policy store is gone")),
        "{result:?}"
    );
    assert_eq!(actor.counts(), (0, 0, 0));
    // The executor goes on.
    assert_eq!(
        exec.invoke("count", json!({"by": 1}), &actor)
            .await
            .unwrap(),
        json!(1)
    );
}

/// Lets everyone in, at once.
fn let_in<A>(_: &(), _: &Invocation<'_, A>) -> Verdict {
    Verdict::Allow
}

/// Lets everyone in, as an `async fn`.
async fn let_in_later<A>(_: &(), _: &Invocation<'_, A>) -> bool {
    true
}

/// Add (public).
#[tool(key = "sum.public", effect = read, authorize = public)]
async fn sum_public(a: i64, b: i64) -> i64 {
    a + b
}

/// Add (behind a plain `fn` hook).
#[tool(key = "sum.fn_hook", effect = read, authorize = let_in)]
async fn sum_fn_hook(a: i64, b: i64) -> i64 {
    a + b
}

/// Add (behind an `async` hook).
#[tool(key = "sum.async_hook", effect = read, authorize = let_in_later)]
async fn sum_async_hook(a: i64, b: i64) -> i64 {
    a + b
}

/// Heap allocations of one `invoke` of `tool`, on this thread.
fn allocations(exec: &Executor, runtime: &tokio::runtime::Runtime, tool: &str) -> u64 {
    let arguments = json!({"a": 2, "b": 3});
    let mut result = None;
    let info = allocation_counter::measure(|| {
        result = Some(runtime.block_on(exec.invoke(tool, arguments, &())));
    });
    assert_eq!(result.unwrap().unwrap(), json!(5), "{tool}");
    info.count_total
}

#[test]
fn a_plain_hook_costs_a_call_no_allocation_and_an_async_one_only_its_future() {
    let exec = executor();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // Warm: the first calls may set up what the runtime and the
    // executor keep (thread-locals, validators).
    for tool in ["sum_public", "sum_fn_hook", "sum_async_hook"] {
        allocations(&exec, &runtime, tool);
    }
    let public = allocations(&exec, &runtime, "sum_public");
    assert_eq!(
        allocations(&exec, &runtime, "sum_fn_hook"),
        public,
        "a plain `fn` hook runs with the call, allocating nothing more"
    );
    // The pipeline is compiled once for every tool: it holds a hook's
    // future behind a pointer, so an `async` hook costs its future's box.
    assert_eq!(
        allocations(&exec, &runtime, "sum_async_hook"),
        public + 1,
        "an `async` hook's future is the one allocation it adds"
    );
}

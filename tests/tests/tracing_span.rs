//! Each call is a `tracing` span with the tool and its outcome.
//!
//! Alone in its test binary: `tracing` caches callsite interest globally, so
//! a scoped subscriber is only reliable when no other thread registers the
//! callsite at the same time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use toolwright::{
    CallError, Catalog, Container, Executor, Inject, Invocation,
    registry::{Policy, Rule, Selector},
    scope::{ResolveError, Scope},
    tool,
};

async fn anyone<A>(_: &(), _: &Invocation<'_, A>) -> bool {
    true
}

/// Double a number.
#[tool(key = "math.double", effect = read, authorize = anyone)]
async fn double(#[schemars(range(max = 10))] n: u32) -> u32 {
    n * 2
}

/// Halve an even number; a public tool, so its calls take the direct path
/// (no hook, no scope), which must be traced all the same.
#[tool(key = "math.halve", effect = read, authorize = public, timeout = "20ms")]
async fn halve(n: u32) -> u32 {
    if n == 0 {
        std::future::pending::<()>().await;
    }
    assert!(n.is_multiple_of(2), "odd");
    n / 2
}

/// Third of a multiple of three; a public tool whose body never waits,
/// traced like any other.
#[tool(key = "math.third", effect = read, authorize = public)]
async fn third(n: u32) -> u32 {
    assert!(n.is_multiple_of(3), "not a multiple of three");
    n / 3
}

/// A unit of work whose commit always fails.
struct Uncommitted;

/// Do some work that cannot be committed.
#[tool(key = "demo.uncommitted", effect = read, authorize = public)]
async fn uncommitted(_work: Inject<Uncommitted>) -> u32 {
    1
}

/// Wait forever, holding a guard that emits an event when dropped: shows
/// where the body of a call dropped by its caller is dropped.
#[tool(key = "demo.linger", effect = read, authorize = public)]
async fn linger() -> u32 {
    let _guard = DroppedEvent;
    std::future::pending::<()>().await;
    0
}

struct DroppedEvent;

impl Drop for DroppedEvent {
    fn drop(&mut self) {
        tracing::info!("body dropped");
    }
}

/// A span as the subscriber saw it: its name and every field recorded.
#[derive(Debug, Clone)]
struct SeenSpan {
    name: &'static str,
    metadata: &'static tracing::Metadata<'static>,
    fields: Vec<(String, String)>,
}

/// A minimal subscriber that keeps every span it is shown.
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<SeenSpan>>>,
    /// The spans entered and not yet exited, innermost last.
    entered: Arc<Mutex<Vec<u64>>>,
    /// For each event, the spans it happened in.
    events: Arc<Mutex<Vec<Vec<u64>>>>,
}

struct FieldWriter<'a>(&'a mut Vec<(String, String)>);

impl tracing::field::Visit for FieldWriter<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut seen = SeenSpan {
            name: span.metadata().name(),
            metadata: span.metadata(),
            fields: Vec::new(),
        };
        span.record(&mut FieldWriter(&mut seen.fields));
        let mut spans = self.spans.lock().unwrap();
        spans.push(seen);
        tracing::span::Id::from_u64(spans.len() as u64)
    }

    fn record(&self, span: &tracing::span::Id, values: &tracing::span::Record<'_>) {
        let mut spans = self.spans.lock().unwrap();
        let seen = &mut spans[span.into_u64() as usize - 1];
        values.record(&mut FieldWriter(&mut seen.fields));
    }

    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}

    /// The innermost entered span: what `Span::current()` (which the
    /// pipeline records the policy's decision on) answers.
    fn current_span(&self) -> tracing_core::span::Current {
        let entered = self.entered.lock().unwrap();
        match entered.last() {
            Some(&id) => {
                let metadata = self.spans.lock().unwrap()[id as usize - 1].metadata;
                tracing_core::span::Current::new(tracing::span::Id::from_u64(id), metadata)
            }
            None => tracing_core::span::Current::none(),
        }
    }

    fn event(&self, _: &tracing::Event<'_>) {
        let entered = self.entered.lock().unwrap().clone();
        self.events.lock().unwrap().push(entered);
    }

    fn enter(&self, span: &tracing::span::Id) {
        self.entered.lock().unwrap().push(span.into_u64());
    }

    fn exit(&self, span: &tracing::span::Id) {
        let mut entered = self.entered.lock().unwrap();
        let last = entered.pop();
        assert_eq!(
            last,
            Some(span.into_u64()),
            "spans exit in the order they entered"
        );
    }
}

fn assert_panicked(answer: &Result<serde_json::Value, CallError>, expected: &str) {
    assert!(
        matches!(answer, Err(CallError::Panicked { message, .. }) if message == expected),
        "{answer:?}"
    );
}

fn assert_invalid(answer: &Result<serde_json::Value, CallError>) {
    assert!(
        matches!(answer, Err(CallError::InvalidArguments { .. })),
        "{answer:?}"
    );
}

fn field<'a>(span: &'a SeenSpan, name: &str) -> Option<&'a str> {
    span.fields
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn each_call_is_a_span_with_tool_and_outcome() {
    let recorder = Recorder::default();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    tracing::subscriber::with_default(recorder.clone(), || {
        let catalog = Catalog::builder()
            .register::<DoubleArgs>()
            .register::<HalveArgs>()
            .register::<ThirdArgs>()
            .register::<UncommittedArgs>()
            .register::<LingerArgs>()
            .build()
            .unwrap();
        let container = Container::builder()
            .request::<Uncommitted>(|scope: Scope| async move {
                scope.on_close(|_| async { Err(std::io::Error::other("commit refused")) });
                Ok::<_, ResolveError>(Uncommitted)
            })
            .build();
        let executor = Executor::new(catalog, container).unwrap();
        runtime.block_on(async {
            executor
                .invoke("double", json!({"n": 2}), &())
                .await
                .unwrap();
            executor
                .invoke("double", json!({"n": 99}), &())
                .await
                .unwrap_err();
            executor
                .invoke("double", json!({"n": 2}), &"not a unit")
                .await
                .unwrap_err();
            let mut answers = Vec::new();
            for (tool, n) in [
                ("halve", json!(4)),
                ("halve", json!(3)),
                ("halve", json!(0)),
                ("halve", json!(-1)),
                ("third", json!(9)),
                ("third", json!(4)),
                ("third", json!("nine")),
            ] {
                answers.push(executor.invoke(tool, json!({ "n": n }), &()).await);
            }
            // What the caller gets from the direct path (`halve` waits) and
            // from a body run in one poll (`third`), besides the spans.
            assert_eq!(answers[0].as_ref().unwrap(), &json!(2));
            assert_panicked(&answers[1], "odd");
            assert!(
                matches!(&answers[2], Err(CallError::Timeout { after, .. }) if *after == Duration::from_millis(20)),
                "{:?}",
                answers[2]
            );
            assert_invalid(&answers[3]);
            assert_eq!(answers[4].as_ref().unwrap(), &json!(3));
            assert_panicked(&answers[5], "not a multiple of three");
            assert_invalid(&answers[6]);
            let uncommitted = executor.invoke("uncommitted", json!({}), &()).await;
            assert!(
                matches!(uncommitted, Err(CallError::Finalizer { .. })),
                "{uncommitted:?}"
            );
            // A direct call dropped while its body waits.
            let mut lingering = Box::pin(executor.invoke("linger", json!({}), &()));
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            assert!(lingering.as_mut().poll(&mut cx).is_pending());
            assert!(recorder.events.lock().unwrap().is_empty());
            drop(lingering);

            // The policy's decision and rule, in the spans of later calls.
            executor.registry().set_policy(
                Policy::new()
                    .rule(
                        Rule::deny("no nines", Selector::name("third"), "nines are out")
                            .when_arguments(|args| args["n"] == 9),
                    )
                    .rule(Rule::allow("halves", Selector::name("halve"))),
            );
            let nine = executor.invoke("third", json!({"n": 9}), &()).await;
            assert!(matches!(nine, Err(CallError::PolicyDenied { .. })), "{nine:?}");
            executor.invoke("halve", json!({"n": 2}), &()).await.unwrap();
            executor.invoke("third", json!({"n": 3}), &()).await.unwrap();
        });
    });
    let spans: Vec<SeenSpan> = recorder
        .spans
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.name == "toolwright.call")
        .cloned()
        .collect();
    assert_eq!(spans.len(), 15, "{spans:?}");
    for span in &spans[..3] {
        assert_eq!(field(span, "key"), Some("math.double"));
        assert_eq!(field(span, "name"), Some("double"));
        assert_eq!(field(span, "effect"), Some("read"));
    }
    for span in &spans[3..7] {
        assert_eq!(field(span, "key"), Some("math.halve"));
        assert_eq!(field(span, "name"), Some("halve"));
    }
    for span in &spans[7..10] {
        assert_eq!(field(span, "key"), Some("math.third"));
        assert_eq!(field(span, "name"), Some("third"));
    }
    assert_eq!(field(&spans[10], "key"), Some("demo.uncommitted"));
    assert_eq!(field(&spans[11], "key"), Some("demo.linger"));
    // The body of the dropped call was dropped inside the call's span
    // (`linger`'s, the last span the subscriber saw).
    let linger_id = recorder
        .spans
        .lock()
        .unwrap()
        .iter()
        .rposition(|s| s.name == "toolwright.call" && field(s, "key") == Some("demo.linger"))
        .unwrap() as u64
        + 1;
    assert_eq!(
        *recorder.events.lock().unwrap(),
        [vec![linger_id]],
        "one event, from the body's drop, inside the call's span"
    );
    assert!(recorder.entered.lock().unwrap().is_empty());
    let outcomes: Vec<_> = spans.iter().map(|s| field(s, "outcome")).collect();
    assert_eq!(
        outcomes,
        [
            Some("ok"),
            Some("invalid_arguments"),
            Some("error"),
            Some("ok"),
            Some("panicked"),
            Some("timeout"),
            Some("invalid_arguments"),
            Some("ok"),
            Some("panicked"),
            Some("invalid_arguments"),
            // The body succeeded; its commit failed.
            Some("finalizer_failed"),
            // Dropped before it finished: no outcome.
            None,
            Some("policy_denied"),
            Some("ok"),
            Some("ok"),
        ]
    );
    let policy: Vec<_> = spans
        .iter()
        .map(|s| (field(s, "policy"), field(s, "policy_rule")))
        .collect();
    assert_eq!(
        policy[..12],
        [(None, None); 12],
        "no policy, nothing recorded"
    );
    assert_eq!(
        policy[12..],
        [
            (Some("deny"), Some("no nines")),
            (Some("allow"), Some("halves")),
            // No rule matched: the fallback decided.
            (Some("allow"), None),
        ]
    );
}

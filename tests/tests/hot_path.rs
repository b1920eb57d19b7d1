//! What a call does not do (build schemas) and what it always does (a
//! `tracing` span with the tool and its outcome), and that calls can move
//! between threads.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool};

static SCHEMAS_BUILT: AtomicUsize = AtomicUsize::new(0);

/// An input type that counts how often its schema is generated.
#[derive(Serialize, Deserialize, Debug)]
struct Counted(u32);

impl JsonSchema for Counted {
    fn schema_name() -> Cow<'static, str> {
        "Counted".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SCHEMAS_BUILT.fetch_add(1, Ordering::SeqCst);
        json_schema!({"type": "integer", "minimum": 0, "maximum": 10})
    }
}

async fn only_small<A>(_: &(), call: &Invocation<'_, A>) -> bool {
    call.name() != "forbidden"
}

/// Double a small number.
#[tool(key = "math.double", effect = read, authorize = only_small)]
async fn double(n: Counted) -> u32 {
    n.0 * 2
}

#[tokio::test]
async fn calls_build_no_schema() {
    let catalog = Catalog::builder().register::<DoubleArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let built = SCHEMAS_BUILT.load(Ordering::SeqCst);
    assert!(built >= 1, "the catalog built the schema");
    for n in 0..50 {
        let result = executor.invoke("double", json!({"n": n % 12}), &()).await;
        match n % 12 {
            0..=10 => assert_eq!(result.unwrap(), json!((n % 12) * 2)),
            _ => assert!(matches!(result, Err(CallError::InvalidArguments { .. }))),
        }
        let typed = executor.call(DoubleArgs { n: Counted(3) }, &()).await;
        assert_eq!(typed.unwrap(), 6);
    }
    assert_eq!(
        SCHEMAS_BUILT.load(Ordering::SeqCst),
        built,
        "no schema per call"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_on_any_thread() {
    let catalog = Catalog::builder().register::<DoubleArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let executor = executor.clone();
            tokio::spawn(async move { executor.invoke("double", json!({"n": n}), &()).await })
        })
        .collect();
    for (n, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().unwrap(), json!(n * 2));
    }
}

/// A span as the subscriber saw it: its name and every field recorded.
#[derive(Debug, Default, Clone)]
struct SeenSpan {
    name: &'static str,
    fields: Vec<(String, String)>,
}

/// A minimal subscriber that keeps every span it is shown.
#[derive(Default, Clone)]
struct Recorder {
    spans: Arc<Mutex<Vec<SeenSpan>>>,
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

    fn event(&self, _: &tracing::Event<'_>) {}

    fn enter(&self, _: &tracing::span::Id) {}

    fn exit(&self, _: &tracing::span::Id) {}
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
        .build()
        .unwrap();
    tracing::subscriber::with_default(recorder.clone(), || {
        let catalog = Catalog::builder().register::<DoubleArgs>().build().unwrap();
        let executor = Executor::new(catalog, Container::default()).unwrap();
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
    assert_eq!(spans.len(), 3, "{spans:?}");
    for span in &spans {
        assert_eq!(field(span, "key"), Some("math.double"));
        assert_eq!(field(span, "name"), Some("double"));
        assert_eq!(field(span, "effect"), Some("read"));
    }
    let outcomes: Vec<_> = spans.iter().map(|s| field(s, "outcome")).collect();
    assert_eq!(
        outcomes,
        [Some("ok"), Some("invalid_arguments"), Some("error")]
    );
}

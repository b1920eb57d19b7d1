//! A call's span, exported through `tracing-opentelemetry` and the
//! OpenTelemetry SDK, follows the semantic conventions for generative-AI
//! tool execution: what a collector or a tracing UI receives, unmapped.
//!
//! Alone in its test binary, like `tracing_span.rs`: `tracing` caches
//! callsite interest globally.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::json;
use toolwright::observe::{Event, ExecutionLog};
use toolwright::{Catalog, Container, Executor, tool};
use tracing_subscriber::layer::SubscriberExt as _;

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Wait longer than allowed.
#[tool(key = "demo.slow", effect = read, authorize = public, timeout = "10ms")]
async fn slow() -> u32 {
    tokio::time::sleep(Duration::from_secs(60)).await;
    0
}

/// The spans the SDK exports, kept.
#[derive(Debug, Clone, Default)]
struct Exported(Arc<Mutex<Vec<SpanData>>>);

impl SpanExporter for Exported {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        self.0.lock().unwrap().extend(batch);
        std::future::ready(Ok(()))
    }
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|KeyValue { key: k, .. }| k.as_str() == key)
        .map(|KeyValue { value, .. }| value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|value| value.as_str().into_owned())
}

/// Runs `calls` against an executor serving `add` and `slow`, with an
/// execution log, under a subscriber that exports to OpenTelemetry; the
/// spans exported and the log.
fn export(calls: impl AsyncFnOnce(&Executor)) -> (Vec<SpanData>, ExecutionLog) {
    let exported = Exported::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exported.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("toolwright-test")));
    let log = ExecutionLog::new(16).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    tracing::subscriber::with_default(subscriber, || {
        let catalog = Catalog::builder()
            .register::<AddArgs>()
            .register::<SlowArgs>()
            .build()
            .unwrap();
        let executor = Executor::builder(catalog, Container::default())
            .observe(log.clone())
            .build()
            .unwrap();
        runtime.block_on(calls(&executor));
    });
    provider.shutdown().unwrap();
    let spans = exported.0.lock().unwrap().clone();
    (spans, log)
}

#[test]
fn a_call_is_an_execute_tool_span_with_the_gen_ai_attributes() {
    let (spans, log) = export(async |executor| {
        executor
            .invoke("add", json!({"a": 2, "b": 3}), &())
            .await
            .unwrap();
    });
    let [span] = &spans[..] else {
        panic!("one span per call: {spans:#?}")
    };
    assert_eq!(span.name, "execute_tool add");
    assert_eq!(text(span, "gen_ai.operation.name").unwrap(), "execute_tool");
    assert_eq!(text(span, "gen_ai.tool.name").unwrap(), "add");
    assert_eq!(text(span, "gen_ai.tool.type").unwrap(), "function");
    assert_eq!(
        text(span, "gen_ai.tool.description").unwrap(),
        "Add two numbers."
    );
    assert_eq!(text(span, "outcome").unwrap(), "ok");
    assert_eq!(text(span, "key").unwrap(), "math.add");
    assert!(attribute(span, "error.type").is_none(), "{span:#?}");
    assert_eq!(span.status, Status::Unset);

    // The span's call id is the call event's: the two can be joined.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let entry = runtime.block_on(log.wait_for(1)).remove(0);
    let Event::Call(call) = &*entry.event else {
        panic!("{entry:?}")
    };
    assert_eq!(
        text(span, "gen_ai.tool.call.id").unwrap(),
        call.id.to_string()
    );
}

#[test]
fn a_failed_call_has_an_error_status_and_its_error_type() {
    let (spans, _) = export(async |executor| {
        let timeout = executor.invoke("slow", json!({}), &()).await;
        assert!(timeout.is_err(), "{timeout:?}");
        let invalid = executor.invoke("add", json!({"a": "two"}), &()).await;
        assert!(invalid.is_err(), "{invalid:?}");
    });
    let [slow, add] = &spans[..] else {
        panic!("one span per call: {spans:#?}")
    };
    assert_eq!(slow.name, "execute_tool slow");
    assert!(matches!(slow.status, Status::Error { .. }), "{slow:#?}");
    assert_eq!(text(slow, "error.type").unwrap(), "timeout");
    assert_eq!(add.name, "execute_tool add");
    assert!(matches!(add.status, Status::Error { .. }), "{add:#?}");
    assert_eq!(text(add, "error.type").unwrap(), "invalid_arguments");
    // Each call has its own id.
    assert_ne!(
        text(slow, "gen_ai.tool.call.id"),
        text(add, "gen_ai.tool.call.id")
    );
}

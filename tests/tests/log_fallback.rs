//! With `tracing`'s `log` feature on and no `tracing` subscriber, a call's
//! span reaches a `log` logger, as every other span does: skipping the span
//! when nothing could show it must not hide it from a logger that can.
//!
//! Alone in its test binary: a `log` logger is set once per process.

use std::sync::Mutex;

use log::{LevelFilter, Log, Metadata, Record};
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Add two integers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The lines of every record logged at the level set.
struct Lines(Mutex<Vec<String>>);

impl Log for Lines {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn log(&self, record: &Record<'_>) {
        let line = format!("{} {} {}", record.level(), record.target(), record.args());
        self.0.lock().unwrap().push(line);
    }

    fn flush(&self) {}
}

static LINES: Lines = Lines(Mutex::new(Vec::new()));

#[tokio::test]
async fn a_call_span_reaches_a_log_logger_when_no_subscriber_is_set() {
    log::set_logger(&LINES).unwrap();
    let executor = Executor::new(Catalog::discover().unwrap(), Container::default()).unwrap();

    // Below INFO, nothing of the span is logged.
    log::set_max_level(LevelFilter::Warn);
    let add = |a: i64, b: i64| executor.invoke("add", json!({"a": a, "b": b}), &());
    assert_eq!(add(1, 2).await.unwrap(), json!(3));
    assert_eq!(LINES.0.lock().unwrap().len(), 0);

    // At INFO, the span's fields, with its outcome.
    log::set_max_level(LevelFilter::Info);
    assert_eq!(add(2, 3).await.unwrap(), json!(5));
    let lines = LINES.0.lock().unwrap().clone();
    assert!(
        lines.iter().any(|line| line.starts_with("INFO ")
            && line.contains("toolwright.call")
            && line.contains(r#"key="math.add""#)
            && line.contains(r#"gen_ai.tool.name="add""#)),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|line| line.contains("outcome=\"ok\"")),
        "{lines:#?}"
    );
}

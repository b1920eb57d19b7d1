//! Concurrency and size: `concurrency = N` and `exclusive` across the
//! direct, typed and batch paths, the order `run_calls` keeps for writes,
//! and results cut for a model while the application gets them whole.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolwright::providers::{self, Format, ToolCall};
use toolwright::{CallError, Catalog, Container, Context, Executor, Invocation, tool};

/// What the tools of a test report, and the test's hold on them: a body
/// runs until the test releases one of `release`'s permits. The callers'
/// context, shared by the clones `Context<Probe>` takes.
#[derive(Clone, Default)]
struct Probe(Arc<Shared>);

impl std::ops::Deref for Probe {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

struct Shared {
    running: AtomicUsize,
    most: AtomicUsize,
    started: AtomicUsize,
    exclusive_running: AtomicBool,
    overlaps: AtomicUsize,
    release: tokio::sync::Semaphore,
    log: Mutex<Vec<String>>,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            running: AtomicUsize::new(0),
            most: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            exclusive_running: AtomicBool::new(false),
            overlaps: AtomicUsize::new(0),
            release: tokio::sync::Semaphore::new(0),
            log: Mutex::default(),
        }
    }
}

impl Shared {
    fn enter(&self) {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        self.started.fetch_add(1, Ordering::SeqCst);
    }

    fn leave(&self) {
        self.running.fetch_sub(1, Ordering::SeqCst);
    }

    /// Waits until the test lets one body finish.
    async fn hold(&self) {
        self.release.acquire().await.unwrap().forget();
    }

    /// Waits until `n` bodies run at once, then gives every other task
    /// many chances to start one more.
    async fn settle_at(&self, n: usize) {
        while self.running.load(Ordering::SeqCst) < n {
            tokio::task::yield_now().await;
        }
        for _ in 0..200 {
            tokio::task::yield_now().await;
        }
    }

    fn record(&self, event: String) {
        self.log.lock().unwrap().push(event);
    }
}

async fn anyone<A>(_: &Probe, _: &Invocation<'_, A>) -> bool {
    true
}

/// Render a report; at most two at once.
#[tool(key = "reports.render", effect = read, concurrency = 2, authorize = public)]
async fn render(probe: Context<Probe>) -> bool {
    probe.enter();
    probe.hold().await;
    probe.leave();
    true
}

/// Export the ledger; one at a time, 100 ms at most, waiting included.
#[tool(key = "ledger.export", effect = read, concurrency = 1, timeout = "100ms", authorize = public)]
async fn export(probe: Context<Probe>) -> bool {
    probe.enter();
    probe.hold().await;
    probe.leave();
    true
}

/// Look something up, briefly.
#[tool(key = "index.lookup", effect = read, authorize = public)]
async fn lookup(probe: Context<Probe>) -> bool {
    probe.enter();
    if probe.exclusive_running.load(Ordering::SeqCst) {
        probe.overlaps.fetch_add(1, Ordering::SeqCst);
    }
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    probe.leave();
    true
}

/// Rebuild the index, with nothing else running.
#[tool(key = "index.rebuild", effect = read, exclusive, authorize = public)]
async fn rebuild(probe: Context<Probe>) -> bool {
    if probe.running.load(Ordering::SeqCst) > 0 {
        probe.overlaps.fetch_add(1, Ordering::SeqCst);
    }
    probe.exclusive_running.store(true, Ordering::SeqCst);
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    if probe.running.load(Ordering::SeqCst) > 0 {
        probe.overlaps.fetch_add(1, Ordering::SeqCst);
    }
    probe.exclusive_running.store(false, Ordering::SeqCst);
    true
}

fn executor_of(catalog: Catalog) -> Executor {
    Executor::new(catalog, Container::default()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_n_bodies_run_at_once_across_invoke_call_and_run_calls() {
    let catalog = Catalog::builder().register::<RenderArgs>().build().unwrap();
    let executor = executor_of(catalog);
    let probe = Probe::default();

    let mut calls = tokio::task::JoinSet::new();
    for i in 0..5 {
        let (executor, probe) = (executor.clone(), probe.clone());
        calls.spawn(async move {
            match i % 3 {
                0 => executor.invoke("render", json!({}), &probe).await.is_ok(),
                1 => executor.call(RenderArgs {}, &probe).await.is_ok(),
                _ => {
                    let call = ToolCall::new(format!("c{i}"), "render", json!({}));
                    !executor.run_calls(vec![call], &probe).await[0].is_error()
                }
            }
        });
    }
    probe.settle_at(2).await;
    assert_eq!(
        probe.running.load(Ordering::SeqCst),
        2,
        "a third body started"
    );
    probe.release.add_permits(5);
    let results = calls.join_all().await;
    assert_eq!(results, [true; 5]);
    assert_eq!(probe.started.load(Ordering::SeqCst), 5);
    assert_eq!(probe.most.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limit_is_shared_by_executors_over_one_catalog() {
    let catalog = Catalog::builder().register::<RenderArgs>().build().unwrap();
    let first = executor_of(catalog.clone());
    let second = executor_of(catalog);
    let probe = Probe::default();
    let mut calls = tokio::task::JoinSet::new();
    for executor in [first.clone(), second.clone(), first, second] {
        let probe = probe.clone();
        calls.spawn(async move { executor.invoke("render", json!({}), &probe).await.is_ok() });
    }
    probe.settle_at(2).await;
    assert_eq!(probe.running.load(Ordering::SeqCst), 2);
    probe.release.add_permits(4);
    assert_eq!(calls.join_all().await, [true; 4]);
    assert_eq!(probe.most.load(Ordering::SeqCst), 2);
}

// On a paused clock both calls start at the same instant, so the waiter's
// deadline is the holder's: on a real one, a waiter that starts late can
// take the turn the holder's timeout frees before its own deadline.
#[tokio::test(start_paused = true)]
async fn waiting_for_a_turn_counts_toward_the_timeout_and_the_body_never_starts() {
    let catalog = Catalog::builder().register::<ExportArgs>().build().unwrap();
    let executor = executor_of(catalog);
    let probe = Probe::default();

    let holder = {
        let (executor, probe) = (executor.clone(), probe.clone());
        tokio::spawn(async move { executor.invoke("export", json!({}), &probe).await })
    };
    probe.settle_at(1).await;
    // The holder times out too (100 ms); the waiter gets its own timeout.
    let waiter = executor.invoke("export", json!({}), &probe).await;
    assert!(
        matches!(&waiter, Err(CallError::Timeout { key, after }) if key == "ledger.export" && *after == Duration::from_millis(100)),
        "{waiter:?}"
    );
    assert!(matches!(
        holder.await.unwrap(),
        Err(CallError::Timeout { .. })
    ));
    assert_eq!(
        probe.started.load(Ordering::SeqCst),
        1,
        "the waiter's body ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_while_waiting_gives_back_nothing_it_did_not_take() {
    let catalog = Catalog::builder().register::<RenderArgs>().build().unwrap();
    let executor = executor_of(catalog);
    let probe = Probe::default();
    let spawn = |executor: &Executor| {
        let (executor, probe) = (executor.clone(), probe.clone());
        tokio::spawn(async move { executor.invoke("render", json!({}), &probe).await })
    };
    let running = [spawn(&executor), spawn(&executor)];
    probe.settle_at(2).await;
    // Waiting for a permit, then dropped.
    let dropped = spawn(&executor);
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    dropped.abort();
    assert!(dropped.await.unwrap_err().is_cancelled());
    // The two holders keep their permits: a new call still waits.
    let next = spawn(&executor);
    probe.settle_at(2).await;
    assert_eq!(probe.running.load(Ordering::SeqCst), 2);
    probe.release.add_permits(3);
    for call in running.into_iter().chain([next]) {
        assert!(call.await.unwrap().is_ok());
    }
    assert_eq!(probe.started.load(Ordering::SeqCst), 3);
    assert_eq!(probe.most.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_call_never_overlaps_another_call_of_its_executor() {
    let catalog = Catalog::builder()
        .register::<LookupArgs>()
        .register::<RebuildArgs>()
        .build()
        .unwrap();
    let executor = executor_of(catalog);
    let probe = Probe::default();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..60 {
        let (executor, probe) = (executor.clone(), probe.clone());
        let name = if i % 10 == 5 { "rebuild" } else { "lookup" };
        calls.spawn(async move { executor.invoke(name, json!({}), &probe).await.is_ok() });
    }
    // And through a batch, whose reads run concurrently.
    let batch: Vec<_> = (0..12)
        .map(|i| {
            let name = if i % 4 == 2 { "rebuild" } else { "lookup" };
            ToolCall::new(format!("c{i}"), name, json!({}))
        })
        .collect();
    let outcomes = executor.run_calls(batch, &probe).await;
    assert!(outcomes.iter().all(|outcome| !outcome.is_error()));
    assert!(calls.join_all().await.into_iter().all(|ok| ok));
    assert_eq!(probe.overlaps.load(Ordering::SeqCst), 0);
    assert!(
        probe.most.load(Ordering::SeqCst) > 1,
        "ordinary calls still run together"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exclusive_tool_mounted_after_the_executor_was_built_is_exclusive_too() {
    let lookups = Catalog::builder().register::<LookupArgs>().build().unwrap();
    let executor = executor_of(lookups);
    let rebuilds = Catalog::builder()
        .register::<RebuildArgs>()
        .build()
        .unwrap();
    executor.registry().mount("late", rebuilds).unwrap();
    let probe = Probe::default();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..60 {
        let (executor, probe) = (executor.clone(), probe.clone());
        let name = if i % 10 == 5 {
            "late_rebuild"
        } else {
            "lookup"
        };
        calls.spawn(async move { executor.invoke(name, json!({}), &probe).await.is_ok() });
    }
    assert!(calls.join_all().await.into_iter().all(|ok| ok));
    assert_eq!(probe.overlaps.load(Ordering::SeqCst), 0);
}

/// Read a value, logging when it starts and ends.
#[tool(key = "kv.get", effect = read, authorize = anyone)]
async fn get(key: String, probe: Context<Probe>) -> String {
    probe.record(format!("start {key}"));
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    probe.record(format!("end {key}"));
    key
}

/// Write a value, logging when it starts and ends.
#[tool(key = "kv.set", effect = write, authorize = anyone, approve = anyone)]
async fn set(key: String, probe: Context<Probe>) -> String {
    probe.record(format!("start {key}"));
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    probe.record(format!("end {key}"));
    key
}

/// Delete a value, logging when it starts and ends.
#[tool(key = "kv.delete", effect = destructive, authorize = anyone, approve = anyone)]
async fn delete(key: String, probe: Context<Probe>) -> String {
    probe.record(format!("start {key}"));
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
    probe.record(format!("end {key}"));
    key
}

#[tokio::test]
async fn run_calls_runs_each_write_alone_in_the_models_order() {
    let catalog = Catalog::builder()
        .register::<GetArgs>()
        .register::<SetArgs>()
        .register::<DeleteArgs>()
        .build()
        .unwrap();
    let executor = executor_of(catalog);
    let probe = Probe::default();
    let batch = [
        ("get", "r1"),
        ("get", "r2"),
        ("set", "w1"),
        ("delete", "w2"),
        ("get", "r3"),
        ("nonesuch", "x"),
        ("get", "r4"),
        ("set", "w3"),
        ("get", "r5"),
    ];
    let calls = batch
        .iter()
        .enumerate()
        .map(|(i, (name, key))| ToolCall::new(format!("c{i}"), *name, json!({ "key": key })))
        .collect();
    let outcomes = executor.run_calls(calls, &probe).await;
    let ids: Vec<_> = outcomes.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]);
    assert!(matches!(
        outcomes[5].result,
        Err(CallError::UnknownTool { .. })
    ));

    let log = probe.log.lock().unwrap().clone();
    let at = |event: &str| log.iter().position(|e| e == event).unwrap();
    let order: Vec<&str> = batch
        .iter()
        .map(|(_, key)| *key)
        .filter(|key| *key != "x")
        .collect();
    for (i, key) in order.iter().enumerate() {
        if !key.starts_with('w') {
            continue;
        }
        let (start, end) = (at(&format!("start {key}")), at(&format!("end {key}")));
        assert_eq!(end, start + 1, "{key} ran alone: {log:?}");
        for earlier in &order[..i] {
            assert!(
                at(&format!("end {earlier}")) < start,
                "{earlier} before {key}: {log:?}"
            );
        }
        for later in &order[i + 1..] {
            assert!(
                at(&format!("start {later}")) > end,
                "{later} after {key}: {log:?}"
            );
        }
    }
    // Consecutive reads run together: each starts before the other ends.
    for (a, b) in [("r1", "r2"), ("r3", "r4")] {
        assert!(
            at(&format!("start {b}")) < at(&format!("end {a}")),
            "{log:?}"
        );
    }
}

#[tokio::test]
async fn a_limit_of_one_runs_every_call_of_a_batch_in_order() {
    let catalog = Catalog::builder().register::<GetArgs>().build().unwrap();
    let executor = executor_of(catalog);
    let probe = Probe::default();
    let calls = (0..4)
        .map(|i| ToolCall::new(format!("c{i}"), "get", json!({ "key": format!("r{i}") })))
        .collect();
    executor.run_calls_with_limit(calls, &probe, 1).await;
    let log = probe.log.lock().unwrap().clone();
    let expected: Vec<String> = (0..4)
        .flat_map(|i| [format!("start r{i}"), format!("end r{i}")])
        .collect();
    assert_eq!(log, expected);
}

/// Read a log file.
#[tool(key = "logs.tail", effect = read, max_result = 10, authorize = public)]
async fn tail(lines: usize) -> String {
    "line\n".repeat(lines)
}

/// List the log files.
#[tool(key = "logs.list", effect = read, authorize = public)]
async fn list_logs(count: usize) -> Vec<String> {
    (0..count).map(|i| format!("app-{i}.log")).collect()
}

#[tokio::test]
async fn a_long_result_is_cut_for_the_model_and_whole_for_the_application() {
    let catalog = Catalog::builder()
        .register::<TailArgs>()
        .register::<ListLogsArgs>()
        .build()
        .unwrap();
    let executor = Executor::builder(catalog, Container::default())
        .max_result(30)
        .build()
        .unwrap();

    // The application: the whole value, on the direct and typed paths.
    let whole = executor
        .invoke("tail", json!({"lines": 100}), &())
        .await
        .unwrap();
    assert_eq!(whole.as_str().unwrap().len(), 500);
    let typed = executor.call(TailArgs { lines: 100 }, &()).await.unwrap();
    assert_eq!(typed.len(), 500);

    let calls = vec![
        ToolCall::new("c1", "tail", json!({"lines": 100})),
        ToolCall::new("c2", "tail", json!({"lines": 2})),
        ToolCall::new("c3", "list_logs", json!({"count": 100})),
        ToolCall::new("c4", "list_logs", json!({"count": 1})),
    ];
    let outcomes = executor.run_calls(calls, &()).await;
    // The tool's own bound (10), then the executor's (30).
    assert_eq!(
        outcomes[0].model_text(),
        format!("{}…[490 more characters]", "line\n".repeat(2))
    );
    assert_eq!(outcomes[0].result.as_ref().unwrap(), &whole);
    assert_eq!(outcomes[1].model_text(), "line\nline\n");
    let listed = outcomes[2].model_text();
    let json = serde_json::to_string(outcomes[2].result.as_ref().unwrap()).unwrap();
    assert_eq!(
        listed,
        format!("{}…[{} more characters]", &json[..30], json.len() - 30)
    );
    assert_eq!(
        outcomes[2]
            .result
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        100
    );
    assert_eq!(outcomes[3].model_text(), r#"["app-0.log"]"#);

    // Every provider's message carries the cut text.
    for format in Format::ALL {
        let messages = providers::result_messages(&outcomes, format);
        let shown = |message: &Value| match format {
            Format::OpenAiChat { .. } => message["content"].clone(),
            Format::OpenAiResponses { .. } => message["output"].clone(),
            Format::Anthropic => message["content"].clone(),
            _ => message["functionResponse"]["response"]["result"].clone(),
        };
        assert_eq!(
            shown(&messages[0]),
            json!(outcomes[0].model_text()),
            "{format}"
        );
        assert_eq!(shown(&messages[2]), json!(listed), "{format}");
        // Gemini gets a value that fits as the value itself.
        if matches!(format, Format::Gemini | Format::GeminiJsonSchema) {
            assert_eq!(shown(&messages[3]), json!(["app-0.log"]));
        }
    }
}

#[test]
fn the_declared_limits_are_read_from_the_catalog() {
    use std::num::NonZeroU32;
    use toolwright::executor::Concurrency;

    let catalog = Catalog::builder()
        .register::<RenderArgs>()
        .register::<RebuildArgs>()
        .register::<TailArgs>()
        .build()
        .unwrap();
    let two = NonZeroU32::new(2).unwrap();
    assert_eq!(
        catalog.get("render").unwrap().concurrency(),
        Concurrency::Limit(two)
    );
    assert_eq!(
        catalog.get("rebuild").unwrap().concurrency(),
        Concurrency::Exclusive
    );
    assert_eq!(
        catalog.get("tail").unwrap().concurrency(),
        Concurrency::Unlimited
    );
    assert_eq!(catalog.get("tail").unwrap().max_result(), Some(10));
    assert_eq!(catalog.get("render").unwrap().max_result(), None);
    // Not part of the descriptor a client is shown.
    let descriptor = serde_json::to_value(catalog.get("render").unwrap()).unwrap();
    assert!(descriptor.get("concurrency").is_none());
}

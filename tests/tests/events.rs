//! Call events and the execution log: every call through every front end
//! gives one event from the executor, observers never slow or fail a call,
//! and the log pages by sequence number.

mod mcp_client;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolwright::approval::{ApprovalId, MemoryLedger, Status};
use toolwright::mcp::McpServer;
use toolwright::observe::{ApprovalUse, CallEvent, Event, ExecutionLog, OutcomeClass};
use toolwright::providers::ToolCall;
use toolwright::{
    CallError, Catalog, Container, Executor, Invocation, Principal,
    approval::{Approvals, Digest},
    executor::{ExecutorBuilder, Verdict},
    registry::{ChangeKind, Decision, Policy, Rule, Selector},
    tool,
};

struct Caller {
    id: &'static str,
    admin: bool,
}

impl Principal for Caller {
    fn id(&self) -> &str {
        self.id
    }
}

const ANN: Caller = Caller {
    id: "ann",
    admin: true,
};
const GUEST: Caller = Caller {
    id: "guest",
    admin: false,
};

async fn admins<A>(caller: &Caller, _: &Invocation<'_, A>) -> bool {
    caller.admin
}

async fn anyone<A>(_: &Caller, _: &Invocation<'_, A>) -> bool {
    true
}

async fn never<A>(_: &Caller, _: &Invocation<'_, A>) -> Verdict {
    Verdict::Pending
}

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = admins)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Send money, which a person must approve.
#[tool(key = "payments.send", effect = write, authorize = anyone, approve = never)]
async fn send(cents: u64) -> bool {
    cents > 0
}

/// Publish a post, through the approval ledger.
#[tool(key = "posts.publish", effect = write, authorize = anyone,
       approve = Caller::approval_ledger)]
async fn publish(post_id: u64) -> u64 {
    post_id
}

/// Panic.
#[tool(key = "demo.explode", effect = read, authorize = public)]
async fn explode() -> bool {
    panic!("boom")
}

/// Take far too long.
#[tool(key = "demo.slow", effect = read, authorize = public, timeout = "20ms")]
async fn slow() -> bool {
    tokio::time::sleep(Duration::from_secs(60)).await;
    true
}

fn catalog() -> Catalog {
    Catalog::builder()
        .register::<AddArgs>()
        .register::<SendArgs>()
        .register::<PublishArgs>()
        .register::<ExplodeArgs>()
        .register::<SlowArgs>()
        .build()
        .unwrap()
}

fn builder() -> ExecutorBuilder {
    Executor::builder(catalog(), Container::default()).principal::<Caller>()
}

/// An executor whose events go to the returned log.
fn logged() -> (Executor, ExecutionLog) {
    let log = ExecutionLog::new(1_000).unwrap();
    let executor = builder().observe(log.clone()).build().unwrap();
    (executor, log)
}

/// The log's first `count` events, which must all be calls.
async fn calls(log: &ExecutionLog, count: u64) -> Vec<CallEvent> {
    let entries = tokio::time::timeout(Duration::from_secs(5), log.wait_for(count))
        .await
        .expect("the events arrive");
    entries
        .iter()
        .map(|entry| match &*entry.event {
            Event::Call(call) => call.clone(),
            other => panic!("not a call: {other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn every_front_end_gives_one_event_per_call() {
    let (executor, log) = logged();
    let args = json!({"a": 2, "b": 3});
    executor.invoke("add", args.clone(), &ANN).await.unwrap();
    executor.call(AddArgs { a: 2, b: 3 }, &ANN).await.unwrap();
    let outcomes = executor
        .run_calls(vec![ToolCall::new("c1", "add", args.clone())], &ANN)
        .await;
    assert!(outcomes[0].result.is_ok());
    let server = McpServer::new(executor.clone(), "events", "0.1.0");
    let client = mcp_client::connect(&server, ANN).await;
    let result = mcp_client::call(&client, "add", args.clone()).await;
    assert_eq!(result.is_error, Some(false));

    let events = calls(&log, 4).await;
    assert_eq!(events.len(), 4);
    for (n, event) in events.iter().enumerate() {
        assert_eq!(event.outcome, OutcomeClass::Ok, "{event:?}");
        assert_eq!(event.key.as_deref(), Some("math.add"));
        assert_eq!(event.name, "add");
        assert_eq!(event.actor.as_deref(), Some("ann"));
        assert_eq!(event.arguments.as_ref(), Some(&args));
        assert_eq!(event.digest, Some(Digest::of("math.add", &args)));
        assert!(event.error.is_none());
        assert_eq!(event.id, n as u64 + 1);
    }
    // Nothing else arrives: one event per call.
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(log.latest(), 4);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn failed_calls_carry_their_class_and_both_texts() {
    let (executor, log) = logged();
    let mut errors = Vec::new();
    for (name, args, ctx) in [
        ("add", json!({"a": 1, "b": 2}), &GUEST),
        ("add", json!({"a": "one", "b": 2}), &ANN),
        ("send", json!({"cents": 500}), &ANN),
        ("explode", json!({}), &ANN),
        ("slow", json!({}), &ANN),
        ("no_such_tool", json!({}), &ANN),
    ] {
        errors.push(executor.invoke(name, args, ctx).await.unwrap_err());
    }
    let events = calls(&log, 6).await;
    let classes: Vec<_> = events.iter().map(|e| e.outcome).collect();
    assert_eq!(
        classes,
        [
            OutcomeClass::Denied,
            OutcomeClass::InvalidArguments,
            OutcomeClass::ApprovalRequired,
            OutcomeClass::Panicked,
            OutcomeClass::Timeout,
            OutcomeClass::UnknownTool,
        ]
    );
    for (event, error) in events.iter().zip(&errors) {
        let text = event.error.as_ref().expect("a failed call has texts");
        assert_eq!(text.model_message, error.model_message());
        assert!(text.message.starts_with(&error.to_string()), "{text:?}");
    }
    assert_eq!(events[0].actor.as_deref(), Some("guest"));
    // Arguments that did not validate are shown as sent, with no digest.
    assert_eq!(events[1].arguments, Some(json!({"a": "one", "b": 2})));
    assert_eq!(events[1].digest, None);
    // An approval request carries the digest a person approves.
    let CallError::ApprovalRequired(request) = &errors[2] else {
        panic!("{:?}", errors[2])
    };
    assert_eq!(events[2].digest, Some(request.digest));
    assert_eq!(
        events[2].approval,
        Some(ApprovalUse::Requested { id: None })
    );
    assert!(events[3].error.as_ref().unwrap().message.contains("boom"));
    assert!(events[4].duration >= Duration::from_millis(20));
    assert_eq!(
        (events[5].key.as_deref(), events[5].name.as_str()),
        (None, "no_such_tool")
    );
}

#[tokio::test]
async fn a_call_dropped_before_it_ends_is_cancelled() {
    let (executor, log) = logged();
    let call = executor.invoke("slow", json!({}), &ANN);
    let dropped = tokio::time::timeout(Duration::from_millis(5), call).await;
    assert!(dropped.is_err(), "still running when dropped");
    let events = calls(&log, 1).await;
    assert_eq!(events[0].outcome, OutcomeClass::Cancelled);
    assert!(events[0].error.is_none());
}

#[tokio::test]
async fn the_policy_ruling_is_in_the_event() {
    let (executor, log) = logged();
    executor
        .registry()
        .set_policy(Policy::new().rule(Rule::deny("no maths", Selector::name("add"), "frozen")));
    let refused = executor.invoke("add", json!({"a": 1, "b": 1}), &ANN).await;
    assert!(matches!(refused, Err(CallError::PolicyDenied { .. })));
    let entries = log.wait_for(2).await;
    assert!(
        matches!(&*entries[0].event, Event::Registry(change) if change.kind == ChangeKind::Policy)
    );
    let Event::Call(call) = &*entries[1].event else {
        panic!("{entries:?}")
    };
    assert_eq!(call.outcome, OutcomeClass::PolicyDenied);
    let policy = call.policy.as_ref().expect("the policy ruled");
    assert!(matches!(&policy.decision, Decision::Deny { reason } if reason == "frozen"));
    assert_eq!(policy.rule.as_deref(), Some("no maths"));
}

#[tokio::test]
async fn a_slow_observer_never_delays_calls_and_counts_what_it_drops() {
    let log = ExecutionLog::new(1_000).unwrap();
    // An observer stuck on its first event until the test lets it go: were
    // a call to wait for it, the calls below would never end.
    let (release, stuck) = std::sync::mpsc::channel::<()>();
    let stuck = std::sync::Mutex::new(stuck);
    let executor = builder()
        .observe(move |_: &Event| {
            _ = stuck.lock().unwrap().recv();
        })
        .observe(log.clone())
        .observer_queue(2)
        .build()
        .unwrap();
    let calls = async {
        for a in 0..20 {
            executor
                .invoke("add", json!({"a": a, "b": 1}), &ANN)
                .await
                .unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(30), calls)
        .await
        .expect("no call waits for a stuck observer");
    let stats = executor.observer_stats();
    // At most one event being handled, two in the observer's queue, one in
    // the dispatcher's hands and two in its channel: the rest dropped, and
    // counted.
    assert!(stats[0].dropped >= 13, "{stats:?}");
    assert!(stats[0].name.contains("events"), "{stats:?}");
    // The log keeps up on the dispatcher: it logs every event
    // its queue had room for.
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.latest() + executor.observer_stats()[1].dropped < 20 {
        assert!(Instant::now() < deadline, "{:?}", executor.observer_stats());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(log.latest() > 0);
    // Let go, the stuck observer is handed what its queue kept.
    drop(release);
}

#[test]
fn an_executor_built_outside_a_runtime_tells_its_observers_on_its_own_thread() {
    let told = Arc::new(AtomicU64::new(0));
    let counted = told.clone();
    // No tokio runtime here: no blocking pool to tell observers on.
    let executor = builder()
        .observe(move |_: &Event| {
            counted.fetch_add(1, Ordering::SeqCst);
        })
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    runtime.block_on(async {
        for a in 0..3 {
            let sum = executor.invoke("add", json!({"a": a, "b": 1}), &ANN).await;
            assert_eq!(sum.unwrap(), json!(a + 1));
        }
    });
    let deadline = Instant::now() + Duration::from_secs(5);
    while told.load(Ordering::SeqCst) < 3 {
        assert!(Instant::now() < deadline, "{:?}", executor.observer_stats());
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(executor.observer_stats()[0].delivered, 3);
}

#[tokio::test]
async fn a_panicking_observer_fails_no_call_and_keeps_receiving() {
    let told = Arc::new(AtomicU64::new(0));
    let counted = told.clone();
    let executor = builder()
        .observe(move |_: &Event| {
            counted.fetch_add(1, Ordering::SeqCst);
            panic!("observer bug")
        })
        .build()
        .unwrap();
    for a in 0..3 {
        let sum = executor.invoke("add", json!({"a": a, "b": 1}), &ANN).await;
        assert_eq!(sum.unwrap(), json!(a + 1));
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while executor.observer_stats()[0].panicked < 3 {
        assert!(Instant::now() < deadline, "{:?}", executor.observer_stats());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(told.load(Ordering::SeqCst), 3);
    assert_eq!(executor.observer_stats()[0].delivered, 3);
}

#[tokio::test]
async fn registry_changes_and_approval_decisions_are_events() {
    let log = ExecutionLog::new(1_000).unwrap();
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = builder()
        .approvals(approvals.clone())
        .observe(log.clone())
        .build()
        .unwrap();
    executor
        .registry()
        .disable(&Selector::name("add"), "maintenance")
        .unwrap();
    executor.registry().enable(&Selector::name("add")).unwrap();

    let asked = executor
        .invoke("publish", json!({"post_id": 7}), &ANN)
        .await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    let id: ApprovalId = request.id.unwrap();
    let bob = Caller {
        id: "bob",
        admin: true,
    };
    approvals.approve(id, &bob, "fine").await.unwrap();
    let ran = executor
        .invoke("publish", json!({"post_id": 7}), &ANN)
        .await;
    assert_eq!(ran.unwrap(), json!(7));

    let entries = tokio::time::timeout(Duration::from_secs(5), log.wait_for(5))
        .await
        .unwrap();
    let events: Vec<&Event> = entries.iter().map(|e| &*e.event).collect();
    assert!(
        matches!(events[0], Event::Registry(change) if matches!(change.kind, ChangeKind::Disabled(_)))
    );
    assert!(matches!(events[1], Event::Registry(change) if change.kind == ChangeKind::Enabled));
    let Event::Call(requested) = events[2] else {
        panic!("{events:?}")
    };
    assert_eq!(
        requested.approval,
        Some(ApprovalUse::Requested { id: Some(id) })
    );
    assert_eq!(requested.digest, Some(request.digest));
    let Event::Approval(decided) = events[3] else {
        panic!("{events:?}")
    };
    assert_eq!((decided.id, decided.status), (id, Status::Approved));
    assert_eq!(decided.decided_by.as_deref(), Some("bob"));
    let Event::Call(consumed) = events[4] else {
        panic!("{events:?}")
    };
    assert_eq!(consumed.outcome, OutcomeClass::Ok);
    assert_eq!(consumed.approval, Some(ApprovalUse::Consumed { id }));
}

#[tokio::test]
async fn the_log_pages_by_sequence_number_and_reports_loss_after_wrap_around() {
    let log = ExecutionLog::new(3).unwrap();
    let executor = builder().observe(log.clone()).build().unwrap();
    for a in 0..5 {
        executor
            .invoke("add", json!({"a": a, "b": 0}), &ANN)
            .await
            .unwrap();
    }
    tokio::time::timeout(Duration::from_secs(5), log.wait_for(5))
        .await
        .unwrap();
    let seqs = |page: &toolwright::observe::Page| -> Vec<u64> {
        page.entries.iter().map(|e| e.seq).collect()
    };

    let page = log.since(0, 10);
    assert_eq!((seqs(&page), page.lost, page.next), (vec![3, 4, 5], 2, 5));
    let page = log.since(1, 10);
    assert_eq!((seqs(&page), page.lost), (vec![3, 4, 5], 1));
    let page = log.since(3, 1);
    assert_eq!((seqs(&page), page.lost, page.next), (vec![4], 0, 4));
    let page = log.since(5, 10);
    assert_eq!((seqs(&page), page.lost, page.next), (vec![], 0, 5));
    // Each entry is the call it records, serialized for an admin API.
    let json = serde_json::to_value(log.since(4, 1)).unwrap();
    assert_eq!(json["entries"][0]["seq"], 5);
    assert_eq!(json["entries"][0]["event"]["event"], "call");
    assert_eq!(
        json["entries"][0]["event"]["arguments"],
        json!({"a": 4, "b": 0})
    );
    assert_eq!(json["entries"][0]["event"]["outcome"], "ok");
    assert!(ExecutionLog::new(0).is_err());
}

#[tokio::test]
async fn write_only_properties_are_redacted_but_the_digest_binds_them() {
    let log = ExecutionLog::new(10).unwrap();
    let tool = toolwright::registry::DynamicTool::builder("auth.login", "login")
        .description("Log in.")
        .effect(toolwright::Effect::Read)
        .input_schema(json!({
            "type": "object",
            "properties": {
                "user": {"type": "string"},
                "password": {"type": "string", "writeOnly": true}
            }
        }))
        .handler(|_| Box::pin(async { Ok(Value::Bool(true)) }))
        .build()
        .unwrap();
    let registry = toolwright::registry::Registry::new(Catalog::builder().build().unwrap());
    registry.register(tool).unwrap();
    let executor = Executor::builder(registry, Container::default())
        .observe(log.clone())
        .build()
        .unwrap();
    let args = json!({"user": "ann", "password": "hunter2"});
    executor.invoke("login", args.clone(), &()).await.unwrap();
    let events = calls(&log, 1).await;
    assert_eq!(
        events[0].arguments,
        Some(json!({"user": "ann", "password": "[redacted]"}))
    );
    assert_eq!(events[0].digest, Some(Digest::of("auth.login", &args)));
}

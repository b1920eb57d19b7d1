//! Idempotency keys through the executor: a write repeated with its key
//! runs once and answers with the first result; the same key with other
//! arguments is refused; a repeat waits for a first call still running;
//! failed and interrupted calls are not run again; keys are per caller and
//! expire; an approved write repeated does not ask again; reads ignore
//! keys; and two executors sharing keys in a database (replicas) run a key
//! once between them.

mod databases;
mod mcp_client;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolwright::approval::{Approvals, MemoryLedger};
use toolwright::idempotency::{
    Idempotency, KeyStore, MemoryKeys, PostgresKeys, Refusal, SqliteKeys,
};
use toolwright::{CallError, Catalog, Container, Executor, Inject, Invocation, Principal, tool};

use databases::Db;

struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

const ANN: Caller = Caller("ann");
const BOB: Caller = Caller("bob");

/// Runs counted by the tools below.
#[derive(Default)]
struct Runs(AtomicUsize);

impl Runs {
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Place an order; `mode` says how the body ends, after `ms` milliseconds.
#[tool(key = "orders.place", effect = write, authorize = public, approve = anyone)]
async fn place(
    sku: String,
    mode: Option<String>,
    ms: Option<u64>,
    runs: Inject<Runs>,
) -> Result<usize, String> {
    let run = runs.0.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::time::sleep(Duration::from_millis(ms.unwrap_or(0))).await;
    match mode.as_deref() {
        Some("fail") => Err(format!("{sku} is out of stock")),
        Some("hang") => std::future::pending().await,
        _ => Ok(run),
    }
}

async fn anyone(_: &Caller, _: &Invocation<'_, PlaceArgs>) -> bool {
    true
}

/// Refund an order, once a person approves.
#[tool(key = "orders.refund", effect = destructive, authorize = public,
       approve = Caller::approval_ledger)]
async fn refund(order: u64, runs: Inject<Runs>) -> usize {
    let _refunded = order;
    runs.0.fetch_add(1, Ordering::SeqCst) + 1
}

/// Count the orders of a product.
#[tool(key = "orders.count", effect = read, authorize = public)]
async fn count(sku: String, runs: Inject<Runs>) -> usize {
    let _counted = sku;
    runs.0.fetch_add(1, Ordering::SeqCst) + 1
}

struct Setup {
    executor: Executor,
    approvals: Approvals,
    runs: Arc<Runs>,
}

fn setup(idempotency: Idempotency) -> Setup {
    let runs = Arc::new(Runs::default());
    let approvals = Approvals::new(MemoryLedger::new());
    let catalog = Catalog::builder()
        .register::<PlaceArgs>()
        .register::<RefundArgs>()
        .register::<CountArgs>()
        .build()
        .unwrap();
    let container = Container::builder().app::<Runs>(runs.clone()).build();
    let executor = Executor::builder(catalog, container)
        .approvals(approvals.clone())
        .principal::<Caller>()
        .idempotency(idempotency)
        .default_timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    Setup {
        executor,
        approvals,
        runs,
    }
}

fn memory() -> Setup {
    setup(Idempotency::new(MemoryKeys::new()))
}

fn refusal(answer: Result<Value, CallError>) -> Refusal {
    match answer {
        Err(CallError::NotRepeated { refusal, .. }) => refusal,
        other => panic!("expected a call not repeated, got {other:?}"),
    }
}

#[tokio::test]
async fn a_repeat_returns_the_first_result_without_running_again() {
    let Setup { executor, runs, .. } = memory();
    let args = json!({"sku": "A-1"});
    let first = executor
        .invoke_idempotent("k1", "place", args.clone(), &ANN)
        .await;
    let again = executor
        .invoke_idempotent("k1", "place", args.clone(), &ANN)
        .await;
    assert_eq!(first.unwrap(), json!(1));
    assert_eq!(again.unwrap(), json!(1), "the recorded result");
    assert_eq!(runs.count(), 1);
    // Without a key, or with another, it runs.
    assert_eq!(
        executor.invoke("place", args.clone(), &ANN).await.unwrap(),
        json!(2)
    );
    let other = executor.invoke_idempotent("k2", "place", args, &ANN).await;
    assert_eq!(other.unwrap(), json!(3));
}

#[tokio::test]
async fn the_same_key_with_other_arguments_or_another_tool_is_refused() {
    let Setup { executor, runs, .. } = memory();
    executor
        .invoke_idempotent("k", "place", json!({"sku": "A-1"}), &ANN)
        .await
        .unwrap();
    let other = executor
        .invoke_idempotent("k", "place", json!({"sku": "B-2"}), &ANN)
        .await;
    assert!(matches!(refusal(other), Refusal::Conflict));
    let error = executor
        .invoke_idempotent("k", "refund", json!({"order": 1}), &ANN)
        .await
        .unwrap_err();
    assert!(matches!(
        &error,
        CallError::NotRepeated {
            refusal: Refusal::Conflict,
            ..
        }
    ));
    assert!(
        error.model_message().contains("new idempotency key"),
        "{}",
        error.model_message()
    );
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn keys_are_each_callers_own() {
    let Setup { executor, runs, .. } = memory();
    let args = json!({"sku": "A-1"});
    let ann = executor
        .invoke_idempotent("k", "place", args.clone(), &ANN)
        .await;
    let bob = executor
        .invoke_idempotent("k", "place", args.clone(), &BOB)
        .await;
    assert_eq!((ann.unwrap(), bob.unwrap()), (json!(1), json!(2)));
    // Bob's other arguments under the same key do not meet Ann's.
    let bob_other = executor
        .invoke_idempotent("k2", "place", json!({"sku": "B"}), &BOB)
        .await;
    assert!(bob_other.is_ok());
    assert_eq!(runs.count(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_repeats_wait_for_the_first_and_share_its_result() {
    let Setup { executor, runs, .. } = memory();
    let executor = Arc::new(executor);
    let calls = (0..20).map(|_| {
        let executor = executor.clone();
        tokio::spawn(async move {
            let args = json!({"sku": "A-1", "ms": 100});
            executor.invoke_idempotent("k", "place", args, &ANN).await
        })
    });
    for call in calls.collect::<Vec<_>>() {
        assert_eq!(call.await.unwrap().unwrap(), json!(1));
    }
    assert_eq!(runs.count(), 1, "one call of twenty ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeat_that_waits_no_longer_than_allowed_is_told_it_is_in_progress() {
    let idempotency = Idempotency::builder(MemoryKeys::new())
        .wait(Duration::from_millis(30))
        .build();
    let Setup { executor, runs, .. } = setup(idempotency);
    let executor = Arc::new(executor);
    let args = json!({"sku": "A-1", "ms": 250});
    let first = {
        let (executor, args) = (executor.clone(), args.clone());
        tokio::spawn(async move { executor.invoke_idempotent("k", "place", args, &ANN).await })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    let started = std::time::Instant::now();
    let repeat = executor.invoke_idempotent("k", "place", args, &ANN).await;
    assert!(matches!(refusal(repeat), Refusal::InProgress));
    assert!(
        started.elapsed() < Duration::from_millis(200),
        "it waited about 30 ms"
    );
    assert_eq!(first.await.unwrap().unwrap(), json!(1));
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn a_failed_call_is_not_run_again_and_its_repeat_says_why() {
    let Setup { executor, runs, .. } = memory();
    let args = json!({"sku": "A-1", "mode": "fail"});
    let first = executor
        .invoke_idempotent("k", "place", args.clone(), &ANN)
        .await;
    assert!(matches!(first, Err(CallError::Tool { .. })));
    let again = executor.invoke_idempotent("k", "place", args, &ANN).await;
    let Refusal::Failed { message } = refusal(again) else {
        panic!("not a failure")
    };
    assert_eq!(message, "The tool failed.");
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn a_call_that_timed_out_has_an_unknown_outcome_and_is_not_run_again() {
    let Setup { executor, runs, .. } = memory();
    let args = json!({"sku": "A-1", "mode": "hang"});
    let first = executor
        .invoke_idempotent("k", "place", args.clone(), &ANN)
        .await;
    assert!(matches!(first, Err(CallError::Timeout { .. })));
    let again = executor.invoke_idempotent("k", "place", args, &ANN).await;
    assert!(matches!(refusal(again), Refusal::Unknown));
    assert_eq!(runs.count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_midway_has_an_unknown_outcome() {
    let Setup { executor, runs, .. } = memory();
    let args = json!({"sku": "A-1", "ms": 10_000});
    let dropped = tokio::time::timeout(
        Duration::from_millis(50),
        executor.invoke_idempotent("k", "place", args.clone(), &ANN),
    )
    .await;
    assert!(dropped.is_err(), "the caller gave up");
    // The dropped call's key is settled on the runtime, at once.
    let mut answer = None;
    for _ in 0..100 {
        match executor
            .invoke_idempotent("k", "place", args.clone(), &ANN)
            .await
        {
            Err(CallError::NotRepeated {
                refusal: Refusal::InProgress,
                ..
            }) => tokio::time::sleep(Duration::from_millis(10)).await,
            other => {
                answer = Some(other);
                break;
            }
        }
    }
    assert!(matches!(refusal(answer.unwrap()), Refusal::Unknown));
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn keys_expire_after_their_time_to_live() {
    let idempotency = Idempotency::builder(MemoryKeys::new())
        .ttl(Duration::from_millis(40))
        .build();
    let Setup { executor, runs, .. } = setup(idempotency);
    let args = json!({"sku": "A-1"});
    executor
        .invoke_idempotent("k", "place", args.clone(), &ANN)
        .await
        .unwrap();
    assert_eq!(
        executor
            .invoke_idempotent("k", "place", args.clone(), &ANN)
            .await
            .unwrap(),
        json!(1)
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    // Expired: a new call, which may even take other arguments.
    let later = executor
        .invoke_idempotent("k", "place", json!({"sku": "B"}), &ANN)
        .await;
    assert_eq!(later.unwrap(), json!(2));
    assert_eq!(runs.count(), 2);
}

#[tokio::test]
async fn an_approved_write_repeated_returns_its_result_without_a_second_approval() {
    let Setup {
        executor,
        approvals,
        runs,
    } = memory();
    let args = json!({"order": 7});
    // Waiting for approval, nothing ran: the key is not spent.
    let asked = executor
        .invoke_idempotent("r7", "refund", args.clone(), &ANN)
        .await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    approvals
        .approve(request.id.unwrap(), &BOB, "refund it")
        .await
        .unwrap();
    let ran = executor
        .invoke_idempotent("r7", "refund", args.clone(), &ANN)
        .await;
    assert_eq!(ran.unwrap(), json!(1));
    // The retry of a lost answer: the result, with no new request.
    let again = executor
        .invoke_idempotent("r7", "refund", args.clone(), &ANN)
        .await;
    assert_eq!(again.unwrap(), json!(1));
    assert!(approvals.pending().await.unwrap().is_empty());
    assert_eq!(runs.count(), 1);
    // Without its key, the same call asks again.
    let unkeyed = executor.invoke("refund", args, &ANN).await;
    assert!(matches!(unkeyed, Err(CallError::ApprovalRequired(_))));
}

#[tokio::test]
async fn a_caller_who_may_not_call_gets_no_recorded_result() {
    let Setup { executor, runs, .. } = memory();
    executor
        .invoke_idempotent("k", "place", json!({"sku": "A-1"}), &ANN)
        .await
        .unwrap();
    // A view without the tool: unknown, whatever the key.
    let narrow = executor.view(toolwright::registry::Selector::name("count"));
    let hidden = narrow
        .invoke_idempotent("k", "place", json!({"sku": "A-1"}), &ANN)
        .await;
    assert!(matches!(hidden, Err(CallError::UnknownTool { .. })));
    assert_eq!(runs.count(), 1);
}

#[tokio::test]
async fn reads_ignore_keys_and_run_every_time() {
    let Setup { executor, runs, .. } = memory();
    let args = json!({"sku": "A-1"});
    executor
        .invoke_idempotent("k", "count", args.clone(), &ANN)
        .await
        .unwrap();
    let again = executor.invoke_idempotent("k", "count", args, &ANN).await;
    assert_eq!(again.unwrap(), json!(2));
    assert_eq!(runs.count(), 2);
}

#[tokio::test]
async fn an_executor_without_keys_ignores_them() {
    let runs = Arc::new(Runs::default());
    let catalog = Catalog::builder().register::<PlaceArgs>().build().unwrap();
    let container = Container::builder().app::<Runs>(runs.clone()).build();
    let executor = Executor::new(catalog, container).unwrap();
    let args = json!({"sku": "A-1"});
    executor
        .invoke_idempotent("k", "place", args.clone(), &ANN)
        .await
        .unwrap();
    executor
        .invoke_idempotent("k", "place", args, &ANN)
        .await
        .unwrap();
    assert_eq!(runs.count(), 2);
}

/// The store's own contract, on a database.
async fn the_store_keeps_the_rules(db: Db) {
    let store: Box<dyn KeyStore> = match &db {
        Db::Sqlite(pool) => Box::new(SqliteKeys::connect(pool.clone()).await.unwrap()),
        Db::Postgres(pool) => Box::new(PostgresKeys::connect(pool.clone()).await.unwrap()),
    };
    contract(&*store).await;
    // Connecting again finds the table in place.
    match &db {
        Db::Sqlite(pool) => drop(SqliteKeys::connect(pool.clone()).await.unwrap()),
        Db::Postgres(pool) => drop(PostgresKeys::connect(pool.clone()).await.unwrap()),
    }
}

#[tokio::test]
async fn the_memory_store_keeps_the_rules() {
    contract(&MemoryKeys::new()).await;
}

/// What every [`KeyStore`] does.
async fn contract(store: &dyn KeyStore) {
    use std::time::SystemTime;
    use toolwright::approval::Digest;
    use toolwright::idempotency::{Claim, Claimed, Recorded};

    let digest = Digest::of("orders.place", &json!({"sku": "A-1"}));
    let other = Digest::of("orders.place", &json!({"sku": "B-2"}));
    let ttl = Duration::from_secs(60);
    let now = SystemTime::now();
    let claim =
        |actor: &str, key: &str, digest| Claim::new(actor, key, "orders.place", digest, now, ttl);

    let first = claim("ann", "k", digest);
    assert_eq!(store.claim(&first).await.unwrap(), Claimed::Fresh);
    assert_eq!(
        store.claim(&claim("ann", "k", digest)).await.unwrap(),
        Claimed::Running
    );
    assert_eq!(
        store.claim(&claim("ann", "k", other)).await.unwrap(),
        Claimed::Conflict
    );
    assert_eq!(
        store.claim(&claim("bob", "k", other)).await.unwrap(),
        Claimed::Fresh
    );
    let output = json!({"order": 7, "text": "ünïcode \u{0}"});
    store
        .finish(&first, &Recorded::Succeeded(output.clone()))
        .await
        .unwrap();
    // A second finish, or one by another token, changes nothing.
    store.finish(&first, &Recorded::Unknown).await.unwrap();
    assert_eq!(
        store.claim(&claim("ann", "k", digest)).await.unwrap(),
        Claimed::Recorded(Recorded::Succeeded(output))
    );

    // Released: claimed afresh.
    let waiting = claim("ann", "released", digest);
    assert_eq!(store.claim(&waiting).await.unwrap(), Claimed::Fresh);
    store.release(&waiting).await.unwrap();
    assert_eq!(
        store.claim(&claim("ann", "released", other)).await.unwrap(),
        Claimed::Fresh
    );

    let failed = claim("ann", "failed", digest);
    store.claim(&failed).await.unwrap();
    store
        .finish(&failed, &Recorded::Failed("The tool failed.".into()))
        .await
        .unwrap();
    assert_eq!(
        store.claim(&claim("ann", "failed", digest)).await.unwrap(),
        Claimed::Recorded(Recorded::Failed("The tool failed.".into()))
    );

    // Expired: claimed afresh, and purged.
    let short = Claim::new("ann", "short", "orders.place", digest, now, Duration::ZERO);
    assert_eq!(store.claim(&short).await.unwrap(), Claimed::Fresh);
    let later = Claim::new(
        "ann",
        "short",
        "orders.place",
        other,
        now + Duration::from_millis(1),
        ttl,
    );
    assert_eq!(store.claim(&later).await.unwrap(), Claimed::Fresh);
    // The first claim's finish no longer lands.
    store.finish(&short, &Recorded::Unknown).await.unwrap();
    assert_eq!(
        store
            .claim(&Claim::new("ann", "short", "orders.place", other, now, ttl))
            .await
            .unwrap(),
        Claimed::Running
    );
    let purged = store
        .purge(now + ttl + Duration::from_secs(1))
        .await
        .unwrap();
    assert!(purged >= 4, "every key was past its time: {purged}");
    assert_eq!(
        store.claim(&claim("ann", "k", other)).await.unwrap(),
        Claimed::Fresh
    );
}

/// Two executors on one database, as two replicas: a key sent to both at
/// once runs one call, and both answer with its result.
async fn replicas_sharing_keys_run_a_key_once(db: Db) {
    let store = || async {
        match &db {
            Db::Sqlite(pool) => Idempotency::new(SqliteKeys::connect(pool.clone()).await.unwrap()),
            Db::Postgres(pool) => {
                Idempotency::new(PostgresKeys::connect(pool.clone()).await.unwrap())
            }
        }
    };
    let one = setup(store().await);
    let two = setup(store().await);
    let executors = [Arc::new(one.executor), Arc::new(two.executor)];
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let executor = executors[i % 2].clone();
            tokio::spawn(async move {
                let args = json!({"sku": "A-1", "ms": 100});
                executor.invoke_idempotent("k", "place", args, &ANN).await
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), json!(1));
    }
    assert_eq!(one.runs.count() + two.runs.count(), 1, "one call ran");
    let other = executors[1]
        .invoke_idempotent("k", "place", json!({"sku": "B"}), &ANN)
        .await;
    assert!(matches!(refusal(other), Refusal::Conflict));
}

/// `tools/call` of `place` over MCP with `_meta` (an object).
async fn call_with_meta(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    meta: Value,
) -> Result<rmcp::model::CallToolResult, rmcp::ServiceError> {
    use rmcp::model::{CallToolRequestParams, MetaObject, RequestMetaObject};
    let (Value::Object(arguments), Value::Object(meta)) = (json!({"sku": "A-1"}), meta) else {
        unreachable!()
    };
    let mut params = CallToolRequestParams::new("place").with_arguments(arguments);
    params.meta = Some(RequestMetaObject(MetaObject(meta)));
    client.call_tool(params).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_mcp_the_key_is_the_calls_meta_idempotency_key() {
    let Setup { executor, runs, .. } = memory();
    let server = toolwright::mcp::McpServer::builder(executor, "keys", "1.0.0").build();
    let client = mcp_client::connect(&server, ANN).await;
    let keyed = json!({"idempotencyKey": "order-1"});
    let first = call_with_meta(&client, keyed.clone()).await.unwrap();
    let again = call_with_meta(&client, keyed).await.unwrap();
    assert_eq!(mcp_client::text(&first), "1");
    assert_eq!(mcp_client::text(&again), "1", "the first call's result");
    assert_eq!(runs.count(), 1);
    // Without one, each call runs.
    let plain = call_with_meta(&client, json!({})).await.unwrap();
    assert_eq!(mcp_client::text(&plain), "2");
    // A key that is not a short string is the client's mistake.
    for bad in [json!(7), json!(""), json!("k".repeat(256))] {
        let refused = call_with_meta(&client, json!({"idempotencyKey": bad})).await;
        let Err(rmcp::ServiceError::McpError(error)) = refused else {
            panic!("{refused:?}")
        };
        assert!(
            error.message.contains("idempotencyKey"),
            "{}",
            error.message
        );
    }
    assert_eq!(runs.count(), 2);
}

databases::each_database!("idempotency": the_store_keeps_the_rules, replicas_sharing_keys_run_a_key_once);

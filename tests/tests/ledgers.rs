//! Every approval ledger keeps one contract (memory, SQLite, PostgreSQL);
//! through the executor an approval runs exactly one call however many
//! arrive at once, and a ledger that cannot answer fails the call closed.
//!
//! PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL`, or
//! `postgres://postgres@127.0.0.1:5432/test`; each test works in a schema
//! of its own. Unreachable, a test says it is skipped, and with `CI=true`
//! it fails.

mod databases;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use databases::{postgres_options, postgres_pool, sqlite_pool};
use serde_json::{Value, json};
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::SqlitePool;
use toolwright::approval::{
    Approval, ApprovalId, ApprovalLedger, LedgerError, MemoryLedger, NewApproval, PostgresLedger,
    Review, Settlement, SqliteLedger, Status,
};
use toolwright::{
    CallError, Catalog, Container, Context, Executor, Principal,
    approval::{ApprovalRequest, Approvals, Digest},
    executor::HookKind,
    tool,
};

// ---------------------------------------------------------------------------
// The stores, one fresh database (or schema) per test.

type Ledger = Arc<dyn ApprovalLedger>;

async fn memory(_test: &str) -> Option<Ledger> {
    Some(Arc::new(MemoryLedger::new()))
}

async fn sqlite(test: &str) -> Option<Ledger> {
    Some(Arc::new(
        SqliteLedger::connect(sqlite_pool("ledgers", test).await)
            .await
            .unwrap(),
    ))
}

async fn postgres(test: &str) -> Option<Ledger> {
    let pool = postgres_pool("tw_", test).await?;
    Some(Arc::new(PostgresLedger::connect(pool).await.unwrap()))
}

// ---------------------------------------------------------------------------
// The contract, run against each store.

/// Whole milliseconds, as every store keeps times.
fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

const NOW: u64 = 1_700_000_000_000;
const TTL: u64 = 60_000;

fn request(key: &str, arguments: Value) -> ApprovalRequest {
    ApprovalRequest {
        key: key.into(),
        name: key.replace('.', "_"),
        digest: Digest::of(key, &arguments),
        arguments,
        id: None,
        requested_by: None,
    }
}

fn new(request: &ApprovalRequest, by: &str, asked_at: u64) -> NewApproval {
    NewApproval {
        request: request.clone(),
        requested_by: by.into(),
        requested_at: at(asked_at),
        expires_at: at(asked_at + TTL),
    }
}

fn decision(approve: bool, by: &str, when: u64) -> Review {
    Review {
        approve,
        by: by.into(),
        reason: Some(format!("{by} looked")),
        at: at(when),
    }
}

/// A request of `by` for `key`, recorded and approved at `NOW`.
async fn approved(ledger: &dyn ApprovalLedger, key: &str, by: &str) -> Approval {
    let recorded = ledger
        .record(new(&request(key, json!({})), by, NOW))
        .await
        .unwrap();
    ledger
        .decide(recorded.id, decision(true, "checker", NOW))
        .await
        .unwrap()
}

mod contract {
    use super::*;

    pub(super) async fn record_returns_the_waiting_request(ledger: Ledger) {
        let ship = request("orders.ship", json!({"order": 1}));
        let first = ledger.record(new(&ship, "alice", NOW)).await.unwrap();
        assert_eq!(first.status, Status::Pending);
        assert_eq!(first.request.id, Some(first.id));
        assert_eq!(first.request.requested_by.as_deref(), Some("alice"));
        assert_eq!(
            (first.requested_at, first.expires_at),
            (at(NOW), at(NOW + TTL))
        );

        let again = ledger.record(new(&ship, "alice", NOW + 10)).await.unwrap();
        assert_eq!(again, first, "the waiting request, not a new one");
        let bobs = ledger.record(new(&ship, "bob", NOW)).await.unwrap();
        assert_ne!(bobs.id, first.id, "another requester asks anew");
        let other = request("orders.ship", json!({"order": 2}));
        let other = ledger.record(new(&other, "alice", NOW)).await.unwrap();
        assert_ne!(other.id, first.id, "another call asks anew");

        // Once it lapsed, the same call is a new request, and the newest.
        let later = ledger.record(new(&ship, "alice", NOW + TTL)).await.unwrap();
        assert!(
            ![first.id, bobs.id, other.id].contains(&later.id),
            "{later:?}"
        );
        assert_eq!(ledger.get(first.id).await.unwrap(), first);
        let latest = ledger.latest(&ship.digest, "alice").await.unwrap();
        assert_eq!(latest.map(|a| a.id), Some(later.id));
        assert!(
            ledger
                .latest(&ship.digest, "carol")
                .await
                .unwrap()
                .is_none()
        );
    }

    pub(super) async fn a_request_reads_back_as_recorded(ledger: Ledger) {
        let arguments = json!({
            "text": "naïve ☃ \u{0} \"quoted\" \\ back",
            "big": u64::MAX,
            "negative": i64::MIN,
            "float": 0.1,
            "nested": {"list": [1, null, true, {"z": [], "a": {}}]},
        });
        let asked = request("notes.write", arguments.clone());
        let recorded = ledger.record(new(&asked, "alice", NOW)).await.unwrap();
        let read = ledger.get(recorded.id).await.unwrap();
        assert_eq!(read, recorded);
        assert_eq!(read.request.arguments, arguments);
        assert_eq!(read.request.digest, Digest::of("notes.write", &arguments));
        assert_eq!(
            (read.request.key.as_str(), read.request.name.as_str()),
            ("notes.write", "notes_write")
        );
        assert_eq!(
            (read.decided_by, read.decided_at, read.reason),
            (None, None, None)
        );
        assert_eq!(
            (read.consumed_at, read.settled_at, read.settlement),
            (None, None, None)
        );
    }

    pub(super) async fn decide_refuses_unknown_decided_and_expired_requests(ledger: Ledger) {
        for unknown in [ApprovalId(9_999), ApprovalId(u64::MAX)] {
            let error = ledger
                .decide(unknown, decision(true, "bob", NOW))
                .await
                .unwrap_err();
            assert!(
                matches!(error, LedgerError::Unknown(id) if id == unknown),
                "{error:?}"
            );
            let error = ledger.get(unknown).await.unwrap_err();
            assert!(matches!(error, LedgerError::Unknown(_)), "{error:?}");
        }

        let one = request("orders.ship", json!({"order": 1}));
        let one = ledger.record(new(&one, "alice", NOW)).await.unwrap();
        let yes = ledger
            .decide(one.id, decision(true, "bob", NOW + 5))
            .await
            .unwrap();
        assert_eq!(yes.status, Status::Approved);
        assert_eq!(yes.decided_by.as_deref(), Some("bob"));
        assert_eq!(yes.decided_at, Some(at(NOW + 5)));
        assert_eq!(yes.reason.as_deref(), Some("bob looked"));
        let twice = ledger
            .decide(one.id, decision(false, "carol", NOW + 6))
            .await
            .unwrap_err();
        assert!(
            matches!(twice, LedgerError::NotPending { id, status: Status::Approved } if id == one.id),
            "{twice:?}"
        );

        let two = request("orders.ship", json!({"order": 2}));
        let two = ledger.record(new(&two, "alice", NOW)).await.unwrap();
        let mut no = decision(false, "bob", NOW);
        no.reason = None;
        let no = ledger.decide(two.id, no).await.unwrap();
        assert_eq!((no.status, no.reason), (Status::Rejected, None));
        let after = ledger
            .decide(two.id, decision(true, "bob", NOW))
            .await
            .unwrap_err();
        assert!(
            matches!(
                after,
                LedgerError::NotPending {
                    status: Status::Rejected,
                    ..
                }
            ),
            "{after:?}"
        );

        let three = request("orders.ship", json!({"order": 3}));
        let three = ledger.record(new(&three, "alice", NOW)).await.unwrap();
        let late = ledger
            .decide(three.id, decision(true, "bob", NOW + TTL))
            .await
            .unwrap_err();
        assert!(
            matches!(late, LedgerError::Expired(id) if id == three.id),
            "{late:?}"
        );
        let still = ledger.get(three.id).await.unwrap();
        assert_eq!((still.status, still.decided_by), (Status::Pending, None));
    }

    pub(super) async fn consume_is_once_and_only_for_the_requester(ledger: Ledger) {
        let ship = request("orders.ship", json!({"order": 1}));
        let asked = ledger.record(new(&ship, "alice", NOW)).await.unwrap();
        let digest = ship.digest;
        assert!(
            ledger
                .consume(&digest, "alice", at(NOW))
                .await
                .unwrap()
                .is_none(),
            "pending is not approved"
        );
        ledger
            .decide(asked.id, decision(true, "bob", NOW))
            .await
            .unwrap();

        assert!(
            ledger
                .consume(&digest, "bob", at(NOW))
                .await
                .unwrap()
                .is_none()
        );
        let other = Digest::of("orders.ship", &json!({"order": 2}));
        assert!(
            ledger
                .consume(&other, "alice", at(NOW))
                .await
                .unwrap()
                .is_none()
        );
        let used = ledger
            .consume(&digest, "alice", at(NOW + 7))
            .await
            .unwrap()
            .expect("the requester's approval");
        assert_eq!(used.id, asked.id);
        assert_eq!(used.status, Status::Consumed);
        assert_eq!(used.consumed_at, Some(at(NOW + 7)));
        assert_eq!(used.request.requested_by.as_deref(), Some("alice"));
        assert!(
            ledger
                .consume(&digest, "alice", at(NOW + 8))
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(ledger.get(asked.id).await.unwrap(), used);

        let refund = request("orders.refund", json!({"order": 1}));
        let asked = ledger.record(new(&refund, "alice", NOW)).await.unwrap();
        ledger
            .decide(asked.id, decision(false, "bob", NOW))
            .await
            .unwrap();
        assert!(
            ledger
                .consume(&refund.digest, "alice", at(NOW))
                .await
                .unwrap()
                .is_none(),
            "rejected is not approved"
        );
    }

    pub(super) async fn concurrent_consumers_get_one_approval(ledger: Ledger) {
        let asked = approved(&*ledger, "files.delete", "alice").await;
        let digest = asked.request.digest;
        let consumers: Vec<_> = (0..24)
            .map(|_| {
                let ledger = ledger.clone();
                tokio::spawn(async move { ledger.consume(&digest, "alice", at(NOW)).await })
            })
            .collect();
        let mut got = Vec::new();
        for consumer in consumers {
            if let Some(approval) = consumer.await.unwrap().unwrap() {
                got.push(approval.id);
            }
        }
        assert_eq!(got, [asked.id]);
    }

    pub(super) async fn an_expired_approval_cannot_be_consumed(ledger: Ledger) {
        let asked = approved(&*ledger, "files.delete", "alice").await;
        let digest = asked.request.digest;
        assert!(
            ledger
                .consume(&digest, "alice", at(NOW + TTL))
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(ledger.get(asked.id).await.unwrap().status, Status::Approved);
        assert!(
            ledger
                .list(Status::Approved, at(NOW + TTL))
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            ledger
                .consume(&digest, "alice", at(NOW + TTL - 1))
                .await
                .unwrap()
                .is_some(),
            "a millisecond before, it was usable"
        );
    }

    pub(super) async fn settle_only_from_consumed(ledger: Ledger) {
        let error = ledger
            .settle(ApprovalId(9_999), Settlement::Succeeded, at(NOW))
            .await
            .unwrap_err();
        assert!(matches!(error, LedgerError::Unknown(_)), "{error:?}");

        let asked = approved(&*ledger, "files.delete", "alice").await;
        let early = ledger
            .settle(asked.id, Settlement::Succeeded, at(NOW))
            .await
            .unwrap_err();
        assert!(
            matches!(early, LedgerError::NotConsumed { id, status: Status::Approved } if id == asked.id),
            "{early:?}"
        );
        let pending = request("files.delete", json!({"path": "/tmp"}));
        let pending = ledger.record(new(&pending, "alice", NOW)).await.unwrap();
        let error = ledger
            .settle(pending.id, Settlement::Failed, at(NOW))
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                LedgerError::NotConsumed {
                    status: Status::Pending,
                    ..
                }
            ),
            "{error:?}"
        );

        ledger
            .consume(&asked.request.digest, "alice", at(NOW))
            .await
            .unwrap()
            .unwrap();
        let settled = ledger
            .settle(asked.id, Settlement::Unknown, at(NOW + 9))
            .await
            .unwrap();
        assert_eq!(settled.status, Status::Settled);
        assert_eq!(settled.settlement, Some(Settlement::Unknown));
        assert_eq!(settled.settled_at, Some(at(NOW + 9)));
        assert_eq!(ledger.get(asked.id).await.unwrap(), settled);
        let twice = ledger
            .settle(asked.id, Settlement::Succeeded, at(NOW + 10))
            .await
            .unwrap_err();
        assert!(
            matches!(
                twice,
                LedgerError::NotConsumed {
                    status: Status::Settled,
                    ..
                }
            ),
            "{twice:?}"
        );
    }

    pub(super) async fn list_filters_by_status_and_leaves_out_the_expired(ledger: Ledger) {
        let ask = |n: u64, asked_at: u64| {
            let ledger = ledger.clone();
            async move {
                let call = request("orders.ship", json!({ "order": n }));
                ledger.record(new(&call, "alice", asked_at)).await.unwrap()
            }
        };
        let decide = |id, approve| {
            let ledger = ledger.clone();
            async move {
                ledger
                    .decide(id, decision(approve, "bob", NOW))
                    .await
                    .unwrap()
            }
        };
        // Listed at NOW + TTL: what was asked at NOW has lapsed by then.
        let old_pending = ask(1, NOW).await;
        let old_approved = ask(2, NOW).await;
        decide(old_approved.id, true).await;
        let rejected = ask(3, NOW).await;
        decide(rejected.id, false).await;
        let consumed = ask(4, NOW).await;
        decide(consumed.id, true).await;
        let digest = consumed.request.digest;
        ledger
            .consume(&digest, "alice", at(NOW))
            .await
            .unwrap()
            .unwrap();
        let settled = ask(5, NOW).await;
        decide(settled.id, true).await;
        let digest = settled.request.digest;
        ledger
            .consume(&digest, "alice", at(NOW))
            .await
            .unwrap()
            .unwrap();
        ledger
            .settle(settled.id, Settlement::Succeeded, at(NOW))
            .await
            .unwrap();
        let pending = ask(6, NOW + 1).await;
        let approved = ask(7, NOW + 1).await;
        decide(approved.id, true).await;
        let second_pending = ask(8, NOW + 2).await;

        let ids = |status| {
            let ledger = ledger.clone();
            async move {
                let listed = ledger.list(status, at(NOW + TTL)).await.unwrap();
                assert!(listed.iter().all(|a| a.status == status), "{listed:?}");
                listed.into_iter().map(|a| a.id).collect::<Vec<_>>()
            }
        };
        assert_eq!(
            ids(Status::Pending).await,
            [pending.id, second_pending.id],
            "oldest first, expired left out"
        );
        assert_eq!(ids(Status::Approved).await, [approved.id]);
        assert_eq!(ids(Status::Rejected).await, [rejected.id]);
        assert_eq!(ids(Status::Consumed).await, [consumed.id]);
        assert_eq!(ids(Status::Settled).await, [settled.id]);
        let before = ledger.list(Status::Pending, at(NOW + 1)).await.unwrap();
        let before: Vec<_> = before.into_iter().map(|a| a.id).collect();
        assert_eq!(before, [old_pending.id, pending.id, second_pending.id]);
    }

    pub(super) async fn pages_after_an_id_reach_every_request_once(ledger: Ledger) {
        let mut asked = Vec::new();
        for n in 0..7 {
            let call = request("orders.ship", json!({ "order": n }));
            asked.push(ledger.record(new(&call, "alice", NOW)).await.unwrap().id);
        }
        // One decided in between is no longer pending: left out, not a gap.
        ledger
            .decide(asked[3], decision(false, "bob", NOW))
            .await
            .unwrap();
        let (mut seen, mut after, mut pages) = (Vec::new(), None, 0);
        loop {
            let page = ledger
                .list_after(Status::Pending, at(NOW), after, 2)
                .await
                .unwrap();
            assert!(page.len() <= 2, "{page:?}");
            assert!(page.iter().all(|a| a.status == Status::Pending));
            let Some(last) = page.last() else { break };
            after = Some(last.id);
            seen.extend(page.iter().map(|a| a.id));
            pages += 1;
        }
        let mut expected = asked.clone();
        expected.remove(3);
        assert_eq!(seen, expected, "oldest first, each once");
        assert_eq!(pages, 3);
        // Past the last id, and past any id a row can have: nothing.
        let past = ApprovalId(u64::MAX);
        let none = ledger.list_after(Status::Pending, at(NOW), Some(past), 10);
        assert!(none.await.unwrap().is_empty());
        let rejected = ledger.list_after(Status::Rejected, at(NOW), None, 10);
        let rejected: Vec<_> = rejected.await.unwrap().into_iter().map(|a| a.id).collect();
        assert_eq!(rejected, [asked[3]]);
    }

    pub(super) async fn pending_count_is_one_requesters_waiting_requests(ledger: Ledger) {
        for n in 0..3 {
            let call = request("orders.ship", json!({ "order": n }));
            ledger.record(new(&call, "alice", NOW)).await.unwrap();
        }
        let late = request("orders.ship", json!({"order": 9}));
        let late = ledger.record(new(&late, "alice", NOW + 10)).await.unwrap();
        let bobs = request("orders.ship", json!({"order": 1}));
        ledger.record(new(&bobs, "bob", NOW)).await.unwrap();
        assert_eq!(ledger.pending_count("alice", at(NOW)).await.unwrap(), 4);
        assert_eq!(ledger.pending_count("bob", at(NOW)).await.unwrap(), 1);
        assert_eq!(ledger.pending_count("carol", at(NOW)).await.unwrap(), 0);
        // A decided request waits no longer; an expired one neither.
        ledger
            .decide(late.id, decision(true, "bob", NOW))
            .await
            .unwrap();
        assert_eq!(ledger.pending_count("alice", at(NOW)).await.unwrap(), 3);
        let lapsed = ledger.pending_count("alice", at(NOW + TTL));
        assert_eq!(lapsed.await.unwrap(), 0);
    }
}

/// One test per store and rule, each on a database of its own.
macro_rules! contract_tests {
    ($store:ident: $($rule:ident),* $(,)?) => {
        mod $store {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $rule() {
                    let name = concat!(stringify!($store), "_", stringify!($rule));
                    let Some(ledger) = super::$store(name).await else { return };
                    super::contract::$rule(ledger).await;
                }
            )*
        }
    };
}

macro_rules! every_store {
    ($($store:ident),*) => {
        $(
            contract_tests!($store:
                record_returns_the_waiting_request,
                a_request_reads_back_as_recorded,
                decide_refuses_unknown_decided_and_expired_requests,
                consume_is_once_and_only_for_the_requester,
                concurrent_consumers_get_one_approval,
                an_expired_approval_cannot_be_consumed,
                settle_only_from_consumed,
                list_filters_by_status_and_leaves_out_the_expired,
                pages_after_an_id_reach_every_request_once,
                pending_count_is_one_requesters_waiting_requests,
            );
        )*
    };
}

every_store!(memory, sqlite, postgres);

// ---------------------------------------------------------------------------
// The schema: created once however many start at once, kept across
// restarts, never taken for one this build does not know.

/// Four starts at once all succeed, and a fifth finds the rows of the first.
async fn starts_at_once_then_again<L, F>(connect: impl Fn() -> F)
where
    L: ApprovalLedger,
    F: Future<Output = Result<L, LedgerError>> + Send + 'static,
{
    let starts: Vec<_> = (0..4).map(|_| tokio::spawn(connect())).collect();
    let mut ledgers = Vec::new();
    for start in starts {
        ledgers.push(start.await.unwrap().unwrap());
    }
    let asked = approved(&ledgers[0], "files.delete", "alice").await;
    drop(ledgers);
    let again = connect().await.unwrap();
    assert_eq!(again.get(asked.id).await.unwrap(), asked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_schema_is_made_once_and_kept() {
    let pool = sqlite_pool("ledgers", "sqlite_schema_kept").await;
    // A pool each, as separate processes would have.
    let options = pool.connect_options();
    starts_at_once_then_again(|| {
        let options = (*options).clone();
        async move {
            let pool = SqlitePool::connect_with(options).await.unwrap();
            SqliteLedger::connect(pool).await
        }
    })
    .await;
    let version: i64 =
        sqlx::query_scalar("SELECT version FROM toolwright_schema WHERE component = 'approvals'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(version, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_schema_is_made_once_and_kept() {
    let Some(pool) = postgres_pool("tw_", "postgres_schema_kept").await else {
        return;
    };
    starts_at_once_then_again(|| PostgresLedger::connect(pool.clone())).await;
    let version: i64 =
        sqlx::query_scalar("SELECT version FROM toolwright_schema WHERE component = 'approvals'")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!(version, 1);
}

fn is_unavailable(error: &LedgerError) -> bool {
    matches!(error, LedgerError::Unavailable(_))
}

// ---------------------------------------------------------------------------
// Through the executor.

#[derive(Clone)]
struct Caller {
    id: &'static str,
    /// Tool bodies run, shared by every clone.
    runs: Arc<AtomicUsize>,
}

impl Principal for Caller {
    fn id(&self) -> &str {
        self.id
    }
}

/// Ship an order.
#[tool(key = "orders.ship", effect = write, authorize = public,
       approve = Caller::approval_ledger)]
async fn ship(order: u64, caller: Context<Caller>) -> u64 {
    caller.runs.fetch_add(1, Ordering::SeqCst);
    order
}

fn executor(approvals: &Approvals) -> Executor {
    let catalog = Catalog::builder().register::<ShipArgs>().build().unwrap();
    Executor::builder(catalog, Container::default())
        .approvals(approvals.clone())
        .build()
        .unwrap()
}

/// Alice's call, approved by Bob; then fifty of the same call at once.
async fn fifty_at_once_run_once(ledger: Ledger) {
    let approvals = Approvals::builder_shared(ledger).build();
    let executor = executor(&approvals);
    let alice = Caller {
        id: "alice",
        runs: Arc::default(),
    };
    let bob = Caller {
        id: "bob",
        runs: Arc::default(),
    };
    let args = json!({"order": 42});
    let asked = executor.invoke("ship", args.clone(), &alice).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    let id = request.id.unwrap();
    approvals.approve(id, &bob, "checked").await.unwrap();

    let start = Arc::new(tokio::sync::Barrier::new(50));
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let (executor, alice, args, start) =
                (executor.clone(), alice.clone(), args.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                executor.invoke("ship", args, &alice).await
            })
        })
        .collect();
    let (mut ran, mut asked_again) = (0, 0);
    for call in calls {
        match call.await.unwrap() {
            Ok(output) => {
                assert_eq!(output, json!(42));
                ran += 1;
            }
            Err(CallError::ApprovalRequired(_)) => asked_again += 1,
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!((ran, asked_again), (1, 49));
    assert_eq!(alice.runs.load(Ordering::SeqCst), 1, "the body ran once");
    let used = approvals.get(id).await.unwrap();
    assert_eq!(
        (used.status, used.settlement),
        (Status::Settled, Some(Settlement::Succeeded))
    );
    // The 49 asked again, and made one new request between them.
    let pending: Vec<_> = approvals.pending().await.unwrap();
    let pending: Vec<_> = pending.into_iter().map(|a| a.id).collect();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_ne!(pending[0], id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_fifty_identical_approved_calls_run_the_body_once() {
    fifty_at_once_run_once(memory("").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_fifty_identical_approved_calls_run_the_body_once() {
    fifty_at_once_run_once(sqlite("sqlite_fifty").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_fifty_identical_approved_calls_run_the_body_once() {
    let Some(ledger) = postgres("postgres_fifty").await else {
        return;
    };
    fifty_at_once_run_once(ledger).await;
}

/// Alice fires thirty distinct writes at once under a cap of five: five
/// wait for a person, the rest are refused and recorded nowhere, and Bob
/// can still ask.
async fn a_flood_stops_at_the_cap(ledger: Ledger) {
    let approvals = Approvals::builder_shared(ledger).max_pending(5).build();
    let executor = executor(&approvals);
    let caller = |id| Caller {
        id,
        runs: Arc::default(),
    };
    let start = Arc::new(tokio::sync::Barrier::new(30));
    let calls: Vec<_> = (0..30)
        .map(|order| {
            let (executor, start) = (executor.clone(), start.clone());
            tokio::spawn(async move {
                start.wait().await;
                executor
                    .invoke("ship", json!({ "order": order }), &caller("alice"))
                    .await
            })
        })
        .collect();
    let (mut waiting, mut refused) = (0, 0);
    for call in calls {
        match call.await.unwrap() {
            Err(CallError::ApprovalRequired(_)) => waiting += 1,
            Err(CallError::TooManyPending {
                requested_by,
                pending,
                ..
            }) => {
                assert_eq!((requested_by.as_str(), pending), ("alice", 5));
                refused += 1;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((waiting, refused), (5, 25));
    let now = SystemTime::now();
    let pending = approvals
        .ledger()
        .pending_count("alice", now)
        .await
        .unwrap();
    assert_eq!(pending, 5, "the count stays at the cap");
    let bob = executor
        .invoke("ship", json!({"order": 1}), &caller("bob"))
        .await;
    assert!(
        matches!(bob, Err(CallError::ApprovalRequired(_))),
        "{bob:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn memory_a_flood_of_distinct_writes_stops_at_the_cap() {
    a_flood_stops_at_the_cap(memory("").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sqlite_a_flood_of_distinct_writes_stops_at_the_cap() {
    a_flood_stops_at_the_cap(sqlite("sqlite_flood").await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_a_flood_of_distinct_writes_stops_at_the_cap() {
    let Some(ledger) = postgres("postgres_flood").await else {
        return;
    };
    a_flood_stops_at_the_cap(ledger).await;
}

/// An approved call whose ledger then goes away is refused, and its body
/// never runs: `close` stops the database underneath.
async fn unreachable_fails_closed(ledger: Ledger, close: impl Future<Output = ()>) {
    let approvals = Approvals::builder_shared(ledger).build();
    let executor = executor(&approvals);
    let alice = Caller {
        id: "alice",
        runs: Arc::default(),
    };
    let args = json!({"order": 7});
    let Err(CallError::ApprovalRequired(request)) =
        executor.invoke("ship", args.clone(), &alice).await
    else {
        panic!("the first call asks")
    };
    let bob = Caller {
        id: "bob",
        runs: Arc::default(),
    };
    approvals
        .approve(request.id.unwrap(), &bob, "")
        .await
        .unwrap();
    close.await;

    let refused = executor.invoke("ship", args, &alice).await.unwrap_err();
    assert!(
        matches!(
            refused,
            CallError::Hook {
                hook: HookKind::Approve,
                ..
            }
        ),
        "{refused:?}"
    );
    let mut source = std::error::Error::source(&refused);
    let mut unavailable = false;
    while let Some(error) = source {
        unavailable |= error
            .downcast_ref::<LedgerError>()
            .is_some_and(is_unavailable);
        source = error.source();
    }
    assert!(unavailable, "no LedgerError::Unavailable in {refused:?}");
    assert_eq!(alice.runs.load(Ordering::SeqCst), 0, "the body never ran");
}

#[tokio::test]
async fn sqlite_unreachable_ledger_fails_the_call_closed() {
    let pool = sqlite_pool("ledgers", "sqlite_unreachable").await;
    let ledger = Arc::new(SqliteLedger::connect(pool.clone()).await.unwrap());
    unreachable_fails_closed(ledger, async move { pool.close().await }).await;
}

#[tokio::test]
async fn postgres_unreachable_ledger_fails_the_call_closed() {
    let Some(pool) = postgres_pool("tw_", "postgres_unreachable").await else {
        return;
    };
    let ledger = Arc::new(PostgresLedger::connect(pool.clone()).await.unwrap());
    unreachable_fails_closed(ledger, async move { pool.close().await }).await;
}

#[tokio::test]
async fn a_ledger_on_a_closed_port_does_not_connect() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let options = postgres_options().host("127.0.0.1").port(port);
    let pool = PgPoolOptions::new()
        .acquire_timeout(Duration::from_secs(2))
        .connect_lazy_with(options);
    let started = std::time::Instant::now();
    let error = PostgresLedger::connect(pool).await.unwrap_err();
    assert!(is_unavailable(&error), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

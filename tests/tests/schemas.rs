//! The stores' schemas: each store's version is kept in
//! `toolwright_schema` and brought up to date by one runner. A database
//! made by the first release is brought up to date with its rows kept,
//! the ledger and the trail starting at once on one database take turns,
//! a schema newer than this build is refused, and connecting again keeps
//! every row. Each case runs
//! on SQLite and on PostgreSQL.
//!
//! PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL`, or
//! `postgres://postgres@127.0.0.1:5432/test`, in a schema of the test's
//! own. Unreachable, a test says it is skipped, and with `CI=true` it fails.

mod databases;

use std::time::{Duration, SystemTime};

use databases::{Db, Shared, each_database};
use serde_json::json;
use toolwright::approval::{ApprovalId, LedgerError, NewApproval, Review, Settlement, Status};
use toolwright::{
    Catalog, Container, Executor, Principal,
    approval::{ApprovalRequest, Approvals, Digest},
};

each_database!("schemas":
    a_first_release_database_is_taken_as_it_is,
    the_ledger_and_the_trail_start_at_once,
    a_newer_schema_is_refused,
    connecting_again_keeps_every_row,
);

struct Person(&'static str);

impl Principal for Person {
    fn id(&self) -> &str {
        self.0
    }
}

fn at(ms: u64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(ms)
}

/// The tables and rows of `tests/fixtures/schema-v1`, as the first release
/// made them in this database.
async fn first_release(db: &Db) {
    db.execute(match db {
        Db::Sqlite(_) => include_str!("../fixtures/schema-v1/sqlite.sql"),
        Db::Postgres(_) => include_str!("../fixtures/schema-v1/postgres.sql"),
    })
    .await;
}

async fn version(db: &Db, component: &str) -> i64 {
    let sql = format!("SELECT version FROM toolwright_schema WHERE component = '{component}'");
    db.int(&sql).await
}

async fn a_first_release_database_is_taken_as_it_is(db: Db) {
    first_release(&db).await;
    let ledger = db.connect_ledger().await.unwrap();
    let trail = db.connect_trail().await.unwrap();
    assert_eq!(version(&db, "approvals").await, 1);
    assert_eq!(version(&db, "audit").await, 2);

    // The first release's row reads back as it was written.
    let asked = ledger.get(ApprovalId(1)).await.unwrap();
    assert_eq!(asked.status, Status::Pending);
    assert_eq!(asked.request.key, "orders.ship");
    assert_eq!(asked.request.arguments, json!({"order": 1}));
    assert_eq!(asked.requested_by, "alice");
    assert_eq!(asked.requested_at, at(1_700_000_000_000));

    // The old tables take this build's statements: a decision, recorded
    // in the trail first, then the approval consumed and settled.
    let approvals = Approvals::builder_shared(ledger.clone()).build();
    let catalog = Catalog::builder().build().unwrap();
    let _executor = Executor::builder(catalog, Container::default())
        .approvals(approvals.clone())
        .audit(Shared(trail))
        .build()
        .unwrap();
    let decided = approvals.approve(asked.id, &Person("bob"), "ok").await;
    assert_eq!(decided.unwrap().status, Status::Approved);
    let now = SystemTime::now();
    let digest = asked.request.digest;
    let used = ledger.consume(&digest, "alice", now).await.unwrap();
    assert_eq!(used.map(|used| used.id), Some(asked.id));
    let settled = ledger.settle(asked.id, Settlement::Succeeded, now).await;
    assert_eq!(settled.unwrap().status, Status::Settled);
    let rows = db.int("SELECT COUNT(*) FROM toolwright_audit").await;
    assert_eq!(rows, 2, "the first release's row and the decision");

    // New rows number on from the old ones.
    let arguments = json!({"order": 2});
    let request = ApprovalRequest {
        key: "orders.ship".into(),
        name: "orders_ship".into(),
        digest: Digest::of("orders.ship", &arguments),
        arguments,
        id: None,
        requested_by: None,
    };
    let next = NewApproval {
        request,
        requested_by: "alice".into(),
        requested_at: now,
        expires_at: now + Duration::from_secs(60),
    };
    assert_eq!(ledger.record(next).await.unwrap().id, ApprovalId(2));
}

/// Three ledgers and three trails connect at once, as replicas starting
/// together would: each finds the schema made by one of them.
async fn the_ledger_and_the_trail_start_at_once(db: Db) {
    let starts: Vec<_> = (0..6)
        .map(|n| {
            let db = db.clone();
            tokio::spawn(async move {
                match n % 2 {
                    0 => db
                        .connect_ledger()
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                    _ => db
                        .connect_trail()
                        .await
                        .map(drop)
                        .map_err(|e| e.to_string()),
                }
            })
        })
        .collect();
    for start in starts {
        start.await.unwrap().unwrap();
    }
    assert_eq!(version(&db, "approvals").await, 1);
    assert_eq!(version(&db, "audit").await, 2);
    assert_eq!(db.int("SELECT COUNT(*) FROM toolwright_schema").await, 2);
}

/// A version this build does not know means rows it cannot read: each
/// store refuses to start, saying which version it found.
async fn a_newer_schema_is_refused(db: Db) {
    db.connect_ledger().await.unwrap();
    db.connect_trail().await.unwrap();
    db.execute("UPDATE toolwright_schema SET version = 99")
        .await;

    let error = db.connect_ledger().await.err().unwrap();
    assert!(matches!(error, LedgerError::Unavailable(_)), "{error:?}");
    let source = std::error::Error::source(&error).unwrap().to_string();
    assert!(source.contains("version 99"), "{source}");

    let error = db.connect_trail().await.err().unwrap();
    let cause = std::error::Error::source(&error).unwrap().to_string();
    assert!(cause.contains("version 99"), "{cause}");
}

/// A second start finds the tables in place and changes nothing.
async fn connecting_again_keeps_every_row(db: Db) {
    first_release(&db).await;
    for _ in 0..2 {
        let ledger = db.connect_ledger().await.unwrap();
        db.connect_trail().await.unwrap();
        assert_eq!(
            ledger.get(ApprovalId(1)).await.unwrap().requested_by,
            "alice"
        );
        assert_eq!(db.int("SELECT COUNT(*) FROM toolwright_audit").await, 1);
    }
    let review = Review {
        approve: false,
        by: "bob".into(),
        reason: None,
        at: SystemTime::now(),
    };
    let ledger = db.connect_ledger().await.unwrap();
    ledger.decide(ApprovalId(1), review).await.unwrap();
    let again = db.connect_ledger().await.unwrap();
    assert_eq!(
        again.get(ApprovalId(1)).await.unwrap().status,
        Status::Rejected
    );
}

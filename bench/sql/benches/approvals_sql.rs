//! What an approval costs in a database: one request recorded, approved
//! and consumed (`record`, `decide`, `consume`: the ledger's side of a
//! call that asks, a person's decision, and the call that then runs), on
//! SQLite and on PostgreSQL.
//!
//! - SQLite: a file in the target's temporary directory, WAL mode, sqlx's
//!   defaults otherwise (`synchronous = FULL`: every commit reaches the
//!   disk);
//! - PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL`, or
//!   `postgres://postgres@127.0.0.1:5432/test`, in a schema of its own;
//!   unreachable, it is skipped with one line.
//!
//! Each round trip is a new call (its own digest), so `record` inserts
//! every time, into a table that grows as a real one does.
//!
//! `cargo bench -p toolwright-sql-bench --bench approvals_sql`; criterion's
//! median per round trip is in `target/criterion/approvals_sql/*/new/estimates.json`.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};
use toolwright::approval::{ApprovalLedger, NewApproval, PostgresLedger, Review, SqliteLedger};
use toolwright::approval::{ApprovalRequest, Digest};

/// One request of `alice` for a call no one asked for before, approved by
/// `bob`, then consumed.
async fn round_trip(ledger: &dyn ApprovalLedger, n: u64) {
    let arguments = json!({"order": n, "note": "ship by Friday"});
    let digest = Digest::of("orders.ship", &arguments);
    let now = SystemTime::now();
    let request = ApprovalRequest {
        key: "orders.ship".into(),
        name: "ship".into(),
        arguments,
        digest,
        id: None,
        requested_by: None,
    };
    let recorded = ledger
        .record(NewApproval {
            request,
            requested_by: "alice".into(),
            requested_at: now,
            expires_at: now + Duration::from_secs(600),
        })
        .await
        .unwrap();
    let decision = Review {
        approve: true,
        by: "bob".into(),
        reason: None,
        at: now,
    };
    ledger.decide(recorded.id, decision).await.unwrap();
    let consumed = ledger.consume(&digest, "alice", now).await.unwrap();
    assert_eq!(consumed.map(|a| a.id), Some(recorded.id));
}

async fn sqlite() -> Arc<dyn ApprovalLedger> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("approvals_sql");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("approvals.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let options = SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal);
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap();
    Arc::new(SqliteLedger::connect(pool).await.unwrap())
}

async fn postgres() -> Option<Arc<dyn ApprovalLedger>> {
    let url = std::env::var("TOOLWRIGHT_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let options: PgConnectOptions = url.parse().unwrap();
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.clone())
        .await;
    let Ok(admin) = admin else {
        println!(
            "skipped: PostgreSQL not reachable at {}:{} (set TOOLWRIGHT_TEST_DATABASE_URL)",
            options.get_host(),
            options.get_port()
        );
        return None;
    };
    for statement in [
        "DROP SCHEMA IF EXISTS toolwright_bench CASCADE",
        "CREATE SCHEMA toolwright_bench",
    ] {
        sqlx::raw_sql(statement).execute(&admin).await.unwrap();
    }
    admin.close().await;
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options.options([("search_path", "toolwright_bench")]))
        .await
        .unwrap();
    Some(Arc::new(PostgresLedger::connect(pool).await.unwrap()))
}

fn approvals_sql(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("approvals_sql");
    group
        .sample_size(50)
        .measurement_time(Duration::from_secs(10));
    let ledgers = [
        ("sqlite", Some(runtime.block_on(sqlite()))),
        ("postgres", runtime.block_on(postgres())),
    ];
    for (name, ledger) in ledgers {
        let Some(ledger) = ledger else { continue };
        let mut n = 0u64;
        group.bench_function(name, |b| {
            b.iter_custom(|iterations| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iterations {
                        n += 1;
                        round_trip(&*ledger, n).await;
                    }
                    start.elapsed()
                })
            });
        });
    }
    group.finish();
}

criterion_group!(benches, approvals_sql);
criterion_main!(benches);

//! The two databases the ledger benches use, set up as `approvals_sql`
//! sets up its own: a SQLite file in WAL mode (sqlx's defaults otherwise,
//! `synchronous = FULL`), and PostgreSQL at `TOOLWRIGHT_TEST_DATABASE_URL`
//! or `postgres://postgres@127.0.0.1:5432/test`, in a schema of its own,
//! skipped with one line when unreachable.
//!
//! Each can also be opened without waiting for the disk at each commit
//! (`durable: false`: SQLite's `synchronous = NORMAL`, which in WAL mode
//! syncs only at checkpoints; PostgreSQL's `synchronous_commit = off` for
//! the bench's sessions): not a setting for a ledger, a way to show what
//! the commits' fsyncs cost.
//!
//! sqlx's pools ping a connection before lending it (`test_before_acquire`,
//! on by default): a round trip before each statement. `POOL_PING=0` turns
//! it off, to show what it costs.

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use toolwright::approval::{ApprovalLedger, PostgresLedger, SqliteLedger};

/// Whether the pools ping a connection before lending it (`POOL_PING`).
fn ping() -> bool {
    std::env::var("POOL_PING").as_deref() != Ok("0")
}

/// A ledger in a new SQLite file `name.db` of the target's temporary
/// directory, through a pool of `connections`; each commit synced to the
/// disk when `durable`.
pub(crate) async fn sqlite(name: &str, connections: u32, durable: bool) -> Arc<dyn ApprovalLedger> {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let options = SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(if durable {
            SqliteSynchronous::Full
        } else {
            SqliteSynchronous::Normal
        });
    let pool = SqlitePoolOptions::new()
        .max_connections(connections)
        .test_before_acquire(ping())
        .connect_with(options)
        .await
        .unwrap();
    Arc::new(SqliteLedger::connect(pool).await.unwrap())
}

/// A ledger in a new PostgreSQL schema `schema`, through a pool of
/// `connections`, each commit waiting for its WAL to reach the disk when
/// `durable`; `None`, said in one line, when the server is unreachable.
pub(crate) async fn postgres(
    schema: &str,
    connections: u32,
    durable: bool,
) -> Option<Arc<dyn ApprovalLedger>> {
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
        format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
        format!("CREATE SCHEMA {schema}"),
    ] {
        sqlx::raw_sql(&statement).execute(&admin).await.unwrap();
    }
    admin.close().await;
    let pool = PgPoolOptions::new()
        .max_connections(connections)
        .test_before_acquire(ping())
        .connect_with(options.options([
            ("search_path", schema),
            ("synchronous_commit", if durable { "on" } else { "off" }),
        ]))
        .await
        .unwrap();
    Some(Arc::new(PostgresLedger::connect(pool).await.unwrap()))
}

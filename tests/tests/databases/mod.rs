//! The databases of the tests that keep something in one: a SQLite file
//! and a PostgreSQL schema of each test's own. PostgreSQL may be missing:
//! outside CI a test then says in one line that it skipped; under
//! `CI=true` it fails.
//!
//! A case that both databases must pass is one `async fn(Db)`, and
//! [`each_database!`] makes a test of it per database.

// Each test binary that includes this module uses only part of it.
#![allow(dead_code, unused_macros)]

use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};
use toolwright::approval::{ApprovalLedger, LedgerError, PostgresLedger, SqliteLedger};
use toolwright::audit::{AuditError, AuditRecord, AuditTrail, PostgresAudit, SqliteAudit};
use toolwright::executor::BoxFuture;

/// A database of the test's own, in either engine.
#[derive(Clone)]
pub(crate) enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl Db {
    /// A SQLite file of the test's own (under `group`).
    pub(crate) async fn sqlite(group: &str, test: &str) -> Db {
        Db::Sqlite(sqlite_pool(group, test).await)
    }

    /// A PostgreSQL schema of the test's own, or `None` (said in one line)
    /// when the database cannot be reached outside CI.
    pub(crate) async fn postgres(prefix: &str, test: &str) -> Option<Db> {
        postgres_pool(prefix, test).await.map(Db::Postgres)
    }

    /// Runs `sql`, one statement or several, and drops what it returns.
    pub(crate) async fn execute(&self, sql: &str) {
        match self {
            Db::Sqlite(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
            Db::Postgres(pool) => sqlx::raw_sql(sql).execute(pool).await.map(drop),
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// The integer that `sql` returns.
    pub(crate) async fn int(&self, sql: &str) -> i64 {
        match self {
            Db::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
            Db::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await,
        }
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The approval ledger in this database, as its `connect` answers.
    pub(crate) async fn connect_ledger(&self) -> Result<Arc<dyn ApprovalLedger>, LedgerError> {
        Ok(match self {
            Db::Sqlite(pool) => Arc::new(SqliteLedger::connect(pool.clone()).await?),
            Db::Postgres(pool) => Arc::new(PostgresLedger::connect(pool.clone()).await?),
        })
    }

    /// The audit trail in this database, as its `connect` answers.
    pub(crate) async fn connect_trail(&self) -> Result<Arc<dyn AuditTrail>, AuditError> {
        Ok(match self {
            Db::Sqlite(pool) => Arc::new(SqliteAudit::connect(pool.clone()).await?),
            Db::Postgres(pool) => Arc::new(PostgresAudit::connect(pool.clone()).await?),
        })
    }
}

/// An `Arc<dyn AuditTrail>` as a trail.
pub(crate) struct Shared(pub(crate) Arc<dyn AuditTrail>);

impl AuditTrail for Shared {
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
        self.0.record(record)
    }
}

/// One test per database for each `case` (an `async fn(Db)` of the
/// including file): on a SQLite file under `group`, and on a PostgreSQL
/// schema named after `group` and the case.
macro_rules! each_database {
    ($group:literal: $($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let db = super::databases::Db::sqlite($group, stringify!($case)).await;
                    super::$case(db).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let prefix = concat!("tw_", $group, "_");
                    let db = super::databases::Db::postgres(prefix, stringify!($case)).await;
                    let Some(db) = db else { return };
                    super::$case(db).await;
                }
            )*
        }
    };
}
#[allow(unused_imports)] // as the module's other items, in some binaries
pub(crate) use each_database;

/// A pool on a new database file of the test's own (under `group`), in WAL mode.
pub(crate) async fn sqlite_pool(group: &str, test: &str) -> SqlitePool {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(group);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{test}.db"));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
    let options = SqliteConnectOptions::new()
        .filename(file)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .busy_timeout(Duration::from_secs(10));
    SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(options)
        .await
        .unwrap()
}

/// Where the tests' PostgreSQL is: `TOOLWRIGHT_TEST_DATABASE_URL`, or the
/// machine's own.
pub(crate) fn postgres_options() -> PgConnectOptions {
    let url = std::env::var("TOOLWRIGHT_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    url.parse()
        .unwrap_or_else(|e| panic!("TOOLWRIGHT_TEST_DATABASE_URL is no PostgreSQL URL: {e}"))
}

/// A pool whose `search_path` is a new schema of the test's own (`prefix`
/// and `test`), or `None`
/// (said on one line) when the database cannot be reached outside CI.
pub(crate) async fn postgres_pool(prefix: &str, test: &str) -> Option<PgPool> {
    let options = postgres_options();
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.clone())
        .await;
    let admin = match admin {
        Ok(admin) => admin,
        Err(error) => {
            let at = format!(
                "{}:{}/{}",
                options.get_host(),
                options.get_port(),
                options.get_database().unwrap_or_default()
            );
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("PostgreSQL not reachable at {at} in CI: {error}");
            }
            println!(
                "skipped: PostgreSQL not reachable at {at} (set TOOLWRIGHT_TEST_DATABASE_URL)"
            );
            return None;
        }
    };
    let schema = format!("{prefix}{test}");
    assert!(schema.len() <= 63, "schema name too long: {schema}");
    for statement in [
        format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
        format!("CREATE SCHEMA {schema}"),
    ] {
        sqlx::raw_sql(&statement).execute(&admin).await.unwrap();
    }
    admin.close().await;
    let pool = PgPoolOptions::new()
        .max_connections(8)
        .connect_with(options.options([("search_path", schema)]))
        .await
        .unwrap();
    Some(pool)
}

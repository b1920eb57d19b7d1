//! The databases of the tests that keep something in one: a SQLite file
//! and a PostgreSQL schema of each test's own. PostgreSQL may be missing:
//! outside CI a test then says in one line that it skipped; under
//! `CI=true` it fails.

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

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

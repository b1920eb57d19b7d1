//! The shop's database: SQLite, embedded and the default, or PostgreSQL,
//! which several processes of `shop serve --http` (replicas) share.
//!
//! **Why sqlx's `Any` driver for the shop's own queries.** A tool's
//! service, the call's transaction ([`Tx`](crate::app::Tx)), the tokens and
//! the tests are then one code for both engines, the engine chosen by the
//! URL at run time. The queries keep to SQL both accept: `$1` placeholders
//! (SQLite reads `$N` as the N-th parameter), flags as 0/1 integers (`Any`
//! decodes no `bool` from SQLite's integers), no engine's date functions
//! (times are Unix seconds, printed by [`crate::tokens`]).
//!
//! **Why a typed pool beside it.** toolwright's stores (the approval
//! ledger, the idempotency keys, and on PostgreSQL the registry state
//! replicas share) take the engine's own pool, so the database is opened
//! twice. An in-memory SQLite database (the demo's) is then two databases,
//! the shop's tables in one and toolwright's in the other; no query joins
//! them, so nothing tells.
//!
//! **Why a folder of migrations per engine.** The types differ (BIGSERIAL,
//! BYTEA), and `sqlx::migrate!` checks each file against what it applied:
//! `migrations/sqlite` are the files every existing database has run, and
//! `migrations/postgres` the same schema and seed in PostgreSQL's types,
//! version for version. sqlx takes an advisory lock while migrating
//! PostgreSQL, so replicas starting at once on an empty database migrate
//! and seed it once.

use sqlx::AnyPool;
use sqlx::any::AnyPoolOptions;
use sqlx::postgres::{PgPool, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions};

/// The shop's database, opened by [`open_database`].
#[derive(Debug, Clone)]
pub struct Database {
    /// The shop's own tables, through sqlx's `Any` driver.
    pub pool: AnyPool,
    /// The same database through its engine's own driver, for toolwright's
    /// stores.
    pub engine: Engine,
}

/// The engine a [`Database`] runs on, with its typed pool.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Engine {
    /// A file, or memory: the embedded default.
    Sqlite(SqlitePool),
    /// A server that replicas share.
    Postgres(PgPool),
}

/// Opens the database at `url` and applies the embedded migrations, seed
/// data included: PostgreSQL for a `postgres://` (or `postgresql://`) URL,
/// SQLite otherwise, its file created if missing.
///
/// A PostgreSQL URL may choose the schema with
/// `?options=-c%20search_path%3D<schema>`; the schema must exist.
pub async fn open_database(url: &str) -> Result<Database, sqlx::Error> {
    sqlx::any::install_default_drivers();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        open_postgres(url).await
    } else {
        open_sqlite(url).await
    }
}

async fn open_sqlite(url: &str) -> Result<Database, sqlx::Error> {
    let mut options: SqliteConnectOptions =
        url.parse::<SqliteConnectOptions>()?.create_if_missing(true);
    // An in-memory database lives as long as its one connection.
    let in_memory = url.contains(":memory:");
    if !in_memory {
        // Readers do not wait for a writer: a `serve` and the `approve` of
        // another process share the file, as `SqliteLedger` recommends.
        options = options.journal_mode(SqliteJournalMode::Wal);
    }
    let connections = if in_memory { 1 } else { 4 };
    // Opened first: it creates the file and sets WAL, which the file keeps.
    let typed = SqlitePoolOptions::new()
        .max_connections(connections)
        .min_connections(if in_memory { 1 } else { 0 })
        .idle_timeout(None)
        .max_lifetime(None)
        .connect_with(options)
        .await?;
    let pool = AnyPoolOptions::new()
        .max_connections(connections)
        .min_connections(if in_memory { 1 } else { 0 })
        .idle_timeout(None)
        .max_lifetime(None)
        .connect(url)
        .await?;
    sqlx::migrate!("./migrations/sqlite").run(&pool).await?;
    Ok(Database {
        pool,
        engine: Engine::Sqlite(typed),
    })
}

async fn open_postgres(url: &str) -> Result<Database, sqlx::Error> {
    let pool = AnyPoolOptions::new()
        .max_connections(4)
        .connect(url)
        .await?;
    sqlx::migrate!("./migrations/postgres").run(&pool).await?;
    // `PostgresSync` keeps one connection listening; the ledger and the
    // keys share the others.
    let typed = PgPoolOptions::new().max_connections(4).connect(url).await?;
    Ok(Database {
        pool,
        engine: Engine::Postgres(typed),
    })
}

//! The audit trail in SQLite.

use sqlx::SqlitePool;

use super::sql;
use super::{AuditError, AuditRecord, AuditTrail};
use crate::util::BoxFuture;

/// The trail's table and indexes.
const SCHEMA: &[&str] = &[
    "CREATE TABLE toolwright_audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('call', 'decision', 'decision_refused')),
        at INTEGER NOT NULL,
        call_id INTEGER,
        tool_key TEXT,
        tool_name TEXT,
        effect TEXT,
        actor TEXT,
        arguments TEXT,
        digest TEXT,
        policy TEXT,
        policy_rule TEXT,
        approval_id INTEGER,
        approval_use TEXT,
        outcome TEXT NOT NULL,
        error TEXT,
        reason TEXT,
        requested_by TEXT,
        duration_ms INTEGER
    )",
    "CREATE INDEX toolwright_audit_by_time ON toolwright_audit (at)",
    "CREATE INDEX toolwright_audit_by_call ON toolwright_audit (call_id)",
];

/// One record.
const INSERT: &str = "INSERT INTO toolwright_audit
    (kind, at, call_id, tool_key, tool_name, effect, actor, arguments, digest, policy,
     policy_rule, approval_id, approval_use, outcome, error, reason, requested_by, duration_ms)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)";

/// An [`AuditTrail`] in a SQLite database, through an sqlx 0.8 pool: one
/// row of the table `toolwright_audit` per record, inserted (and, in WAL
/// mode with sqlx's default `synchronous = FULL`, on disk) before `record`
/// returns.
///
/// Columns: `seq` (the order of the records), `kind` (`call`, `decision`,
/// `decision_refused`), `at` (Unix milliseconds), `call_id`, `tool_key`,
/// `tool_name`, `effect`, `actor` (who called, or who decided),
/// `arguments` (masked JSON), `digest`, `policy`, `policy_rule`,
/// `approval_id`, `approval_use` (`requested`, `consumed`, `decided`),
/// `outcome`, `error` (the application-facing text), `reason`,
/// `requested_by`, `duration_ms`.
///
/// Use a file in WAL mode; `sqlite::memory:` keeps the records only as
/// long as the pool's one connection (for tests).
///
/// ```
/// use std::time::Duration;
/// use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool};
/// use toolwright::audit::SqliteAudit;
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// # let dir = std::env::temp_dir().join(format!("toolwright-audit-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// let options = SqliteConnectOptions::new()
///     .filename(dir.join("audit.db"))
///     .create_if_missing(true)
///     .journal_mode(SqliteJournalMode::Wal)
///     .busy_timeout(Duration::from_secs(5));
/// let pool = SqlitePool::connect_with(options).await.unwrap();
/// let trail = SqliteAudit::connect(pool.clone()).await.unwrap();
/// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
///     .audit(trail)
///     .build()
///     .unwrap();
/// # let _ = executor;
/// let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM toolwright_audit")
///     .fetch_one(&pool)
///     .await
///     .unwrap();
/// assert_eq!(rows, 0);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteAudit {
    pool: SqlitePool,
}

impl SqliteAudit {
    /// A trail in the database of `pool`, its table created first when
    /// missing (`toolwright_audit`, and the row `audit` of
    /// `toolwright_schema`, shared with [`SqliteLedger`](crate::approval::SqliteLedger)).
    /// Connecting again, from this process or another, changes nothing. A
    /// database error, or a schema newer than this build knows, is an
    /// [`AuditError`].
    ///
    /// ```
    /// use sqlx::sqlite::SqlitePoolOptions;
    /// use toolwright::audit::SqliteAudit;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pool = SqlitePoolOptions::new()
    ///     .max_connections(1)
    ///     .idle_timeout(None)
    ///     .max_lifetime(None)
    ///     .connect("sqlite::memory:")
    ///     .await
    ///     .unwrap();
    /// SqliteAudit::connect(pool.clone()).await.unwrap();
    /// SqliteAudit::connect(pool).await.unwrap();
    /// # }
    /// ```
    pub async fn connect(pool: SqlitePool) -> Result<Self, AuditError> {
        migrate(&pool).await?;
        Ok(SqliteAudit { pool })
    }
}

async fn migrate(pool: &SqlitePool) -> Result<(), AuditError> {
    let db = AuditError::new;
    // The write lock first: a second process starting now waits here.
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS toolwright_schema (
            component TEXT PRIMARY KEY NOT NULL,
            version INTEGER NOT NULL
        )",
    )
    .execute(&mut *tx)
    .await
    .map_err(db)?;
    let found: Option<i64> =
        sqlx::query_scalar("SELECT version FROM toolwright_schema WHERE component = $1")
            .bind(sql::COMPONENT)
            .fetch_optional(&mut *tx)
            .await
            .map_err(db)?;
    if sql::needs_creating(found)? {
        for &statement in SCHEMA {
            sqlx::query(statement).execute(&mut *tx).await.map_err(db)?;
        }
        sqlx::query(
            "INSERT INTO toolwright_schema (component, version) VALUES ($1, $2)
             ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        )
        .bind(sql::COMPONENT)
        .bind(sql::VERSION)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}

impl AuditTrail for SqliteAudit {
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
        Box::pin(async move {
            sql::bind(sqlx::query(INSERT), record)
                .execute(&self.pool)
                .await
                .map(drop)
                .map_err(AuditError::new)
        })
    }
}

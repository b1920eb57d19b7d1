//! The audit trail in PostgreSQL.

use sqlx::PgPool;

use super::sql;
use super::{AuditError, AuditRecord, AuditTrail};
use crate::util::BoxFuture;

/// The trail's table and indexes.
const SCHEMA: &[&str] = &[
    "CREATE TABLE toolwright_audit (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('call', 'decision', 'decision_refused')),
        at BIGINT NOT NULL,
        call_id BIGINT,
        tool_key TEXT,
        tool_name TEXT,
        effect TEXT,
        actor TEXT,
        arguments JSON,
        digest TEXT,
        policy TEXT,
        policy_rule TEXT,
        approval_id BIGINT,
        approval_use TEXT,
        outcome TEXT NOT NULL,
        error TEXT,
        reason TEXT,
        requested_by TEXT,
        duration_ms BIGINT
    )",
    "CREATE INDEX toolwright_audit_by_time ON toolwright_audit (at)",
    "CREATE INDEX toolwright_audit_by_call ON toolwright_audit (call_id)",
];

/// The advisory lock migrations take: the approvals ledger's class
/// (`PostgresLedger` creates the same `toolwright_schema` table), so that
/// the two never create it at once.
const MIGRATION_LOCK: i32 = 0x7477_6170;

/// One record.
const INSERT: &str = "INSERT INTO toolwright_audit
    (kind, at, call_id, tool_key, tool_name, effect, actor, arguments, digest, policy,
     policy_rule, approval_id, approval_use, outcome, error, reason, requested_by, duration_ms)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8::json, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)";

/// An [`AuditTrail`] in a PostgreSQL database, through an sqlx 0.8 pool:
/// one row of the table `toolwright_audit` per record, committed before
/// `record` returns. Every replica of an application can share it.
///
/// The columns are `SqliteAudit`'s (feature `sqlite`);
/// `arguments` is `json` (masked), kept as the text
/// that was recorded.
///
/// ```no_run
/// use std::time::Duration;
/// use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
/// use toolwright::audit::PostgresAudit;
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let options: PgConnectOptions = "postgres://toolwright@db.internal/app".parse().unwrap();
/// let pool = PgPoolOptions::new()
///     .acquire_timeout(Duration::from_secs(2))
///     .connect_lazy_with(options);
/// let trail = PostgresAudit::connect(pool).await.unwrap();
/// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
///     .audit(trail)
///     .build()
///     .unwrap();
/// # let _ = executor;
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresAudit {
    pool: PgPool,
}

impl PostgresAudit {
    /// A trail in the database of `pool`, its table created first when
    /// missing (`toolwright_audit`, and the row `audit` of
    /// `toolwright_schema`, shared with [`PostgresLedger`](crate::approval::PostgresLedger)).
    /// Replicas starting at once take turns (under an advisory lock), and
    /// connecting again changes nothing. A database error, or a schema
    /// newer than this build knows, is an [`AuditError`].
    ///
    /// ```no_run
    /// use sqlx::PgPool;
    /// use toolwright::audit::PostgresAudit;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let pool = PgPool::connect("postgres://127.0.0.1/test").await.unwrap();
    /// let trail = PostgresAudit::connect(pool).await.unwrap();
    /// # let _ = trail;
    /// # }
    /// ```
    pub async fn connect(pool: PgPool) -> Result<Self, AuditError> {
        migrate(&pool).await?;
        Ok(PostgresAudit { pool })
    }
}

async fn migrate(pool: &PgPool) -> Result<(), AuditError> {
    let db = AuditError::new;
    let mut tx = pool.begin().await.map_err(db)?;
    // Replicas starting at once wait here, one after the other; the next
    // finds the table made. `IF NOT EXISTS` alone would race.
    sqlx::query("SELECT pg_advisory_xact_lock($1, 0)")
        .bind(MIGRATION_LOCK)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS toolwright_schema (
            component TEXT PRIMARY KEY,
            version BIGINT NOT NULL
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

impl AuditTrail for PostgresAudit {
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

//! The ledger in PostgreSQL: shared by every replica of an application.

use std::time::SystemTime;

use sqlx::PgPool;

use super::ledger::{
    Approval, ApprovalLedger, LedgerError, NewApproval, Review, Settlement, Status, to_unix_ms,
};
use super::sql;
use crate::request::{ApprovalId, Digest};
use crate::util::BoxFuture;

/// What each version of the schema adds, in order.
///
/// The arguments are `json`, not `jsonb`: kept as the text that was
/// approved, and a string holding `\u0000`, which `jsonb` refuses, still
/// records.
const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE toolwright_approvals (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tool_key TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments JSON NOT NULL,
        digest TEXT NOT NULL,
        requested_by TEXT NOT NULL,
        requested_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('pending', 'approved', 'rejected', 'consumed', 'settled')),
        decided_by TEXT,
        decided_at BIGINT,
        reason TEXT,
        consumed_at BIGINT,
        settled_at BIGINT,
        settlement TEXT CHECK (settlement IN ('succeeded', 'failed', 'unknown'))
    )",
    "CREATE INDEX toolwright_approvals_by_call
        ON toolwright_approvals (digest, requested_by, status)",
    "CREATE INDEX toolwright_approvals_by_status ON toolwright_approvals (status, id)",
]];

/// The advisory locks this ledger takes (`pg_advisory_xact_lock(class,
/// key)`, a key space apart from the one-`bigint` locks applications
/// usually take): migrations under `(MIGRATION_LOCK, 0)`, a `record` under
/// `(RECORD_LOCK, the digest's first four bytes)`.
const MIGRATION_LOCK: i32 = 0x7477_6170;
const RECORD_LOCK: i32 = 0x7477_6171;

/// Every column, as [`sql::approval`] reads them.
macro_rules! columns {
    () => {
        "id, tool_key, tool_name, arguments::text AS arguments, digest, requested_by, requested_at, expires_at, \
         status, decided_by, decided_at, reason, consumed_at, settled_at, settlement"
    };
}

/// An [`ApprovalLedger`] in a PostgreSQL database, through an sqlx 0.8
/// pool: what every replica of an application shares, so that an approval
/// runs exactly one call whichever replica the call reaches.
///
/// Each operation is one statement or one transaction. Consuming takes
/// the row `FOR UPDATE SKIP LOCKED` and marks it in the same statement:
/// of any number of concurrent consumers on any number of replicas, one
/// gets the approval and the others none. Recording takes a transaction's
/// advisory lock on the call, so identical requests at once make one row.
///
/// The tables live in the first schema of the connections' `search_path`
/// (`public` unless the pool says otherwise).
///
/// ```no_run
/// use sqlx::postgres::PgPoolOptions;
/// use toolwright::approval::PostgresLedger;
/// use toolwright::Approvals;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let pool = PgPoolOptions::new()
///     .max_connections(10)
///     .connect("postgres://toolwright@db.internal/app")
///     .await
///     .unwrap();
/// let approvals = Approvals::new(PostgresLedger::connect(pool).await.unwrap());
/// for request in approvals.pending().await.unwrap() {
///     println!("{} asks to run {}", request.requested_by, request.request.key);
/// }
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct PostgresLedger {
    pool: PgPool,
}

impl PostgresLedger {
    /// A ledger in the database of `pool`, with its tables created or
    /// brought up to date first: `toolwright_approvals`, and the row
    /// `approvals` of `toolwright_schema`, which holds the schema's
    /// version.
    ///
    /// Replicas starting at once take turns (under an advisory lock), and
    /// connecting again changes nothing. A schema newer than this build
    /// knows is [`LedgerError::Unavailable`], as is any database error.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
    /// use toolwright::approval::{LedgerError, PostgresLedger};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Its own schema, and a short wait when the database is down.
    /// let options: PgConnectOptions = "postgres://toolwright@db.internal/app".parse().unwrap();
    /// let pool = PgPoolOptions::new()
    ///     .acquire_timeout(Duration::from_secs(2))
    ///     .connect_lazy_with(options.options([("search_path", "approvals")]));
    /// match PostgresLedger::connect(pool).await {
    ///     Ok(ledger) => { /* Approvals::new(ledger) */ }
    ///     Err(LedgerError::Unavailable(error)) => eprintln!("no ledger: {error}"),
    ///     Err(error) => eprintln!("{error}"),
    /// }
    /// # }
    /// ```
    pub async fn connect(pool: PgPool) -> Result<Self, LedgerError> {
        migrate(&pool).await?;
        Ok(PostgresLedger { pool })
    }
}

async fn migrate(pool: &PgPool) -> Result<(), LedgerError> {
    let db = LedgerError::unavailable;
    let mut tx = pool.begin().await.map_err(db)?;
    // Replicas starting at once wait here, one after the other; the next
    // finds the schema up to date. `IF NOT EXISTS` alone would race.
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
    let (steps, version) = sql::missing(MIGRATIONS, found)?;
    for &statement in steps.iter().flat_map(|step| step.iter()) {
        sqlx::query(statement).execute(&mut *tx).await.map_err(db)?;
    }
    if !steps.is_empty() {
        sqlx::query(
            "INSERT INTO toolwright_schema (component, version) VALUES ($1, $2)
             ON CONFLICT (component) DO UPDATE SET version = excluded.version",
        )
        .bind(sql::COMPONENT)
        .bind(version)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}

impl PostgresLedger {
    async fn status(&self, id: i64) -> Result<Option<String>, LedgerError> {
        sqlx::query_scalar("SELECT status FROM toolwright_approvals WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)
    }

    async fn record_new(&self, new: NewApproval) -> Result<Approval, LedgerError> {
        let digest = new.request.digest.to_string();
        let mut tx = self.pool.begin().await.map_err(LedgerError::unavailable)?;
        // Identical requests (and the rare call sharing the digest's first
        // bytes) take turns from the look to the insert: one row, not two.
        let [a, b, c, d, ..] = *new.request.digest.as_bytes();
        sqlx::query("SELECT pg_advisory_xact_lock($1, $2)")
            .bind(RECORD_LOCK)
            .bind(i32::from_be_bytes([a, b, c, d]))
            .execute(&mut *tx)
            .await
            .map_err(LedgerError::unavailable)?;
        let waiting = sqlx::query(concat!(
            "SELECT ",
            columns!(),
            " FROM toolwright_approvals
              WHERE digest = $1 AND requested_by = $2 AND status = 'pending' AND expires_at > $3
              ORDER BY id DESC LIMIT 1"
        ))
        .bind(&digest)
        .bind(&new.requested_by)
        .bind(to_unix_ms(new.requested_at))
        .fetch_optional(&mut *tx)
        .await
        .map_err(LedgerError::unavailable)?;
        let row = match waiting {
            Some(row) => row,
            None => sqlx::query(concat!(
                "INSERT INTO toolwright_approvals
                    (tool_key, tool_name, arguments, digest, requested_by, requested_at,
                     expires_at, status)
                 VALUES ($1, $2, $3::json, $4, $5, $6, $7, 'pending')
                 RETURNING ",
                columns!()
            ))
            .bind(&new.request.key)
            .bind(&new.request.name)
            .bind(new.request.arguments.to_string())
            .bind(&digest)
            .bind(&new.requested_by)
            .bind(to_unix_ms(new.requested_at))
            .bind(to_unix_ms(new.expires_at))
            .fetch_one(&mut *tx)
            .await
            .map_err(LedgerError::unavailable)?,
        };
        tx.commit().await.map_err(LedgerError::unavailable)?;
        sql::approval(&row)
    }
}

impl ApprovalLedger for PostgresLedger {
    fn record(&self, new: NewApproval) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(self.record_new(new))
    }

    fn get(&self, id: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let stored = sql::stored_id(id).ok_or(LedgerError::Unknown(id))?;
            let row = sqlx::query(concat!(
                "SELECT ",
                columns!(),
                " FROM toolwright_approvals WHERE id = $1"
            ))
            .bind(stored)
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            sql::approval(&row.ok_or(LedgerError::Unknown(id))?)
        })
    }

    fn latest<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        Box::pin(async move {
            let row = sqlx::query(concat!(
                "SELECT ",
                columns!(),
                " FROM toolwright_approvals WHERE digest = $1 AND requested_by = $2
                  ORDER BY id DESC LIMIT 1"
            ))
            .bind(digest.to_string())
            .bind(requested_by)
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            row.as_ref().map(sql::approval).transpose()
        })
    }

    fn list(
        &self,
        status: Status,
        now: SystemTime,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        Box::pin(async move {
            let rows = sqlx::query(concat!(
                "SELECT ",
                columns!(),
                " FROM toolwright_approvals
                  WHERE status = $1
                    AND (status NOT IN ('pending', 'approved') OR expires_at > $2)
                  ORDER BY id"
            ))
            .bind(status.as_str())
            .bind(to_unix_ms(now))
            .fetch_all(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            rows.iter().map(sql::approval).collect()
        })
    }

    fn list_after(
        &self,
        status: Status,
        now: SystemTime,
        after: Option<ApprovalId>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        Box::pin(async move {
            // An id past what a row can have leaves nothing after it.
            let after = match after.map(sql::stored_id) {
                None => 0,
                Some(Some(after)) => after,
                Some(None) => return Ok(Vec::new()),
            };
            let rows = sqlx::query(concat!(
                "SELECT ",
                columns!(),
                " FROM toolwright_approvals
                  WHERE status = $1
                    AND (status NOT IN ('pending', 'approved') OR expires_at > $2)
                    AND id > $3
                  ORDER BY id
                  LIMIT $4"
            ))
            .bind(status.as_str())
            .bind(to_unix_ms(now))
            .bind(after)
            .bind(i64::try_from(limit).unwrap_or(i64::MAX))
            .fetch_all(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            rows.iter().map(sql::approval).collect()
        })
    }

    fn pending_count<'a>(
        &'a self,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<usize, LedgerError>> {
        Box::pin(async move {
            let count: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM toolwright_approvals
                 WHERE status = 'pending' AND requested_by = $1 AND expires_at > $2",
            )
            .bind(requested_by)
            .bind(to_unix_ms(now))
            .fetch_one(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            Ok(usize::try_from(count).unwrap_or(0))
        })
    }

    fn decide(
        &self,
        id: ApprovalId,
        decision: Review,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let stored = sql::stored_id(id).ok_or(LedgerError::Unknown(id))?;
            let status = if decision.approve {
                Status::Approved
            } else {
                Status::Rejected
            };
            let decided = sqlx::query(concat!(
                "UPDATE toolwright_approvals
                 SET status = $2, decided_by = $3, decided_at = $4, reason = $5
                 WHERE id = $1 AND status = 'pending' AND expires_at > $4
                 RETURNING ",
                columns!()
            ))
            .bind(stored)
            .bind(status.as_str())
            .bind(&decision.by)
            .bind(to_unix_ms(decision.at))
            .bind(&decision.reason)
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            match decided {
                Some(row) => sql::approval(&row),
                None => Err(sql::not_decided(id, self.status(stored).await?)),
            }
        })
    }

    fn consume<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        Box::pin(async move {
            // The row is locked as it is picked; a concurrent consumer skips
            // it rather than wait, and `status` is checked again once locked.
            let row = sqlx::query(concat!(
                "UPDATE toolwright_approvals SET status = 'consumed', consumed_at = $3
                 WHERE id = (
                     SELECT id FROM toolwright_approvals
                     WHERE digest = $1 AND requested_by = $2 AND status = 'approved'
                       AND expires_at > $3
                     ORDER BY id LIMIT 1
                     FOR UPDATE SKIP LOCKED
                 )
                 AND status = 'approved'
                 RETURNING ",
                columns!()
            ))
            .bind(digest.to_string())
            .bind(requested_by)
            .bind(to_unix_ms(now))
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            row.as_ref().map(sql::approval).transpose()
        })
    }

    fn settle(
        &self,
        id: ApprovalId,
        settlement: Settlement,
        at: SystemTime,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let stored = sql::stored_id(id).ok_or(LedgerError::Unknown(id))?;
            let settled = sqlx::query(concat!(
                "UPDATE toolwright_approvals
                 SET status = 'settled', settled_at = $2, settlement = $3
                 WHERE id = $1 AND status = 'consumed'
                 RETURNING ",
                columns!()
            ))
            .bind(stored)
            .bind(to_unix_ms(at))
            .bind(settlement.as_str())
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)?;
            match settled {
                Some(row) => sql::approval(&row),
                None => Err(sql::not_settled(id, self.status(stored).await?)),
            }
        })
    }
}

//! The ledger in SQLite: for one machine, kept across restarts.

use std::time::SystemTime;

use sqlx::SqlitePool;

use super::ledger::{
    Approval, ApprovalLedger, LedgerError, NewApproval, Review, Settlement, Status, to_unix_ms,
};
use super::sql;
use crate::request::{ApprovalId, Digest};
use crate::util::BoxFuture;

/// What each version of the schema adds, in order.
const MIGRATIONS: &[&[&str]] = &[&[
    "CREATE TABLE toolwright_approvals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tool_key TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        arguments TEXT NOT NULL,
        digest TEXT NOT NULL,
        requested_by TEXT NOT NULL,
        requested_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('pending', 'approved', 'rejected', 'consumed', 'settled')),
        decided_by TEXT,
        decided_at INTEGER,
        reason TEXT,
        consumed_at INTEGER,
        settled_at INTEGER,
        settlement TEXT CHECK (settlement IN ('succeeded', 'failed', 'unknown'))
    )",
    "CREATE INDEX toolwright_approvals_by_call
        ON toolwright_approvals (digest, requested_by, status)",
    "CREATE INDEX toolwright_approvals_by_status ON toolwright_approvals (status, id)",
]];

/// Every column, as [`sql::approval`] reads them.
macro_rules! columns {
    () => {
        "id, tool_key, tool_name, arguments, digest, requested_by, requested_at, expires_at, \
         status, decided_by, decided_at, reason, consumed_at, settled_at, settlement"
    };
}

/// An [`ApprovalLedger`] in a SQLite database, through an sqlx 0.8 pool:
/// requests, decisions and outcomes outlive the process, so an approval
/// whose call never settled is still there for a person to reconcile.
///
/// Each operation is one statement, or one `BEGIN IMMEDIATE` transaction,
/// so several pools (or processes) on the same file keep the rules: an
/// approval is consumed once. Writers wait for each other up to the
/// pool's busy timeout (sqlx's default is 5 seconds) and then fail, and
/// the call with them (closed). Use a file in WAL mode
/// ([`connect`](Self::connect) shows one); `sqlite::memory:` gives each
/// pooled connection a database of its own, so keep such a pool to one
/// connection that never closes, and to tests.
///
/// sqlx's SQLite driver turns on `tracing`'s `log` feature: in a process
/// that installs no `tracing` subscriber, every call's span then also goes
/// through `log`, which costs a call some hundreds of instructions. Any
/// subscriber (the one your application logs with) avoids it.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use serde_json::json;
/// use sqlx::sqlite::SqlitePoolOptions;
/// use toolwright::approval::{ApprovalLedger, Review, NewApproval, SqliteLedger, Status};
/// use toolwright::{ApprovalRequest, Digest};
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
/// let ledger = SqliteLedger::connect(pool).await.unwrap();
///
/// let arguments = json!({"sku": "A-1", "qty": 2});
/// let digest = Digest::of("orders.place", &arguments);
/// let now = SystemTime::now();
/// let request = ApprovalRequest {
///     key: "orders.place".into(), name: "place_order".into(), arguments, digest,
///     id: None, requested_by: None,
/// };
/// let new = NewApproval {
///     request, requested_by: "alice".into(),
///     requested_at: now, expires_at: now + Duration::from_secs(600),
/// };
/// let recorded = ledger.record(new.clone()).await.unwrap();
/// assert_eq!(recorded.request.requested_by.as_deref(), Some("alice"));
/// // Asking again while it waits returns the same request.
/// assert_eq!(ledger.record(new).await.unwrap().id, recorded.id);
///
/// let decision = Review { approve: true, by: "bob".into(), reason: None, at: now };
/// ledger.decide(recorded.id, decision).await.unwrap();
/// assert!(ledger.consume(&digest, "mallory", now).await.unwrap().is_none());
/// let used = ledger.consume(&digest, "alice", now).await.unwrap().unwrap();
/// assert_eq!(used.status, Status::Consumed);
/// assert!(ledger.consume(&digest, "alice", now).await.unwrap().is_none());
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteLedger {
    pool: SqlitePool,
}

impl SqliteLedger {
    /// A ledger in the database of `pool`, with its tables created or
    /// brought up to date first: `toolwright_approvals`, and the row
    /// `approvals` of `toolwright_schema`, which holds the schema's
    /// version.
    ///
    /// Connecting again, from this process or another at the same time,
    /// changes nothing. A schema newer than this build knows is
    /// [`LedgerError::Unavailable`], as is any database error.
    ///
    /// ```
    /// use std::time::Duration;
    /// use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool};
    /// use toolwright::approval::SqliteLedger;
    /// use toolwright::Approvals;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let dir = std::env::temp_dir().join(format!("toolwright-doc-{}", std::process::id()));
    /// # std::fs::create_dir_all(&dir).unwrap();
    /// let options = SqliteConnectOptions::new()
    ///     .filename(dir.join("approvals.db"))
    ///     .create_if_missing(true)
    ///     .journal_mode(SqliteJournalMode::Wal)
    ///     .busy_timeout(Duration::from_secs(5));
    /// let pool = SqlitePool::connect_with(options).await.unwrap();
    /// let ledger = SqliteLedger::connect(pool.clone()).await.unwrap();
    /// // Idempotent: a second start finds the schema in place.
    /// SqliteLedger::connect(pool).await.unwrap();
    /// let approvals = Approvals::new(ledger);
    /// assert!(approvals.pending().await.unwrap().is_empty());
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// # }
    /// ```
    pub async fn connect(pool: SqlitePool) -> Result<Self, LedgerError> {
        migrate(&pool).await?;
        Ok(SqliteLedger { pool })
    }
}

async fn migrate(pool: &SqlitePool) -> Result<(), LedgerError> {
    let db = LedgerError::unavailable;
    // The write lock first: a second process starting now waits here, then
    // finds the schema up to date.
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

impl SqliteLedger {
    async fn status(&self, id: i64) -> Result<Option<String>, LedgerError> {
        sqlx::query_scalar("SELECT status FROM toolwright_approvals WHERE id = $1")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(LedgerError::unavailable)
    }

    async fn record_new(&self, new: NewApproval) -> Result<Approval, LedgerError> {
        let digest = new.request.digest.to_string();
        // One writer at a time from the look to the insert: two identical
        // requests at once make one row.
        let mut tx = self
            .pool
            .begin_with("BEGIN IMMEDIATE")
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
                 VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending')
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

impl ApprovalLedger for SqliteLedger {
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
            // One statement, so one write transaction: of any number of
            // consumers, one finds the row still approved.
            let row = sqlx::query(concat!(
                "UPDATE toolwright_approvals SET status = 'consumed', consumed_at = $3
                 WHERE id = (
                     SELECT id FROM toolwright_approvals
                     WHERE digest = $1 AND requested_by = $2 AND status = 'approved'
                       AND expires_at > $3
                     ORDER BY id LIMIT 1
                 )
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

//! The ledger in SQLite: for one machine, kept across restarts.

use sqlx::{Sqlite, SqlitePool};

use super::SqlLedger;
use super::schema::SCHEMA;
use crate::approval::LedgerError;
use crate::sql::migrate;

/// [`SqlLedger`] on SQLite: an
/// [`ApprovalLedger`](crate::approval::ApprovalLedger) in a SQLite
/// database, through an sqlx 0.8 pool: requests, decisions and outcomes
/// outlive the process, so an approval whose call never settled is still
/// there for a person to reconcile.
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
/// use toolwright::{approval::{ApprovalRequest, Digest}};
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
pub type SqliteLedger = SqlLedger<Sqlite>;

impl SqlLedger<Sqlite> {
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
    /// use toolwright::approval::Approvals;
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
        migrate(&pool, &SCHEMA)
            .await
            .map_err(LedgerError::unavailable)?;
        Ok(SqlLedger { pool })
    }
}

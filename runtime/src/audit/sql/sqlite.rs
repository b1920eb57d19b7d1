//! The audit trail in SQLite.

use sqlx::{Sqlite, SqlitePool};

use super::SqlAudit;
use super::schema::SCHEMA;
use crate::audit::AuditError;
use crate::sql::migrate;

/// [`SqlAudit`] on SQLite: an [`AuditTrail`](crate::audit::AuditTrail) in a
/// SQLite database, through an sqlx 0.8 pool: one row of the table
/// `toolwright_audit` per record, inserted (and, in WAL mode with sqlx's
/// default `synchronous = FULL`, on disk) before `record` returns.
///
/// The columns are [`SqlAudit`]'s.
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
pub type SqliteAudit = SqlAudit<Sqlite>;

impl SqlAudit<Sqlite> {
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
        migrate(&pool, &SCHEMA).await.map_err(AuditError::new)?;
        Ok(SqlAudit { pool })
    }
}

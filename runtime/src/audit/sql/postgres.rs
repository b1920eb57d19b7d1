//! The audit trail in PostgreSQL.

use sqlx::{PgPool, Postgres};

use super::SqlAudit;
use super::schema::SCHEMA;
use crate::audit::AuditError;
use crate::sql::migrate;

/// [`SqlAudit`] on PostgreSQL: an [`AuditTrail`](crate::audit::AuditTrail)
/// in a PostgreSQL database, through an sqlx 0.8 pool: one row of the table
/// `toolwright_audit` per record, committed before `record` returns. Every
/// replica of an application can share it.
///
/// The columns are [`SqlAudit`]'s; `arguments` is `json` (masked), kept
/// as the text that was recorded.
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
pub type PostgresAudit = SqlAudit<Postgres>;

impl SqlAudit<Postgres> {
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
        migrate(&pool, &SCHEMA).await.map_err(AuditError::new)?;
        Ok(SqlAudit { pool })
    }
}

//! The ledger in PostgreSQL: shared by every replica of an application.

use sqlx::{PgPool, Postgres};

use super::SqlLedger;
use super::schema::SCHEMA;
use crate::approval::LedgerError;
use crate::sql::migrate;

/// [`SqlLedger`] on PostgreSQL: an
/// [`ApprovalLedger`](crate::approval::ApprovalLedger) in a PostgreSQL
/// database, through an sqlx 0.8 pool: what every replica of an application
/// shares, so that an approval runs exactly one call whichever replica the
/// call reaches.
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
/// use toolwright::approval::Approvals;
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
pub type PostgresLedger = SqlLedger<Postgres>;

impl SqlLedger<Postgres> {
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
        migrate(&pool, &SCHEMA)
            .await
            .map_err(LedgerError::unavailable)?;
        Ok(SqlLedger { pool })
    }
}

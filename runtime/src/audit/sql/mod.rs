//! The trail in an SQL database: one type, [`SqlAudit`], for SQLite and
//! PostgreSQL, its statements written once (the SQL layer says why).

#[cfg(feature = "postgres")]
mod postgres;
mod row;
mod schema;
#[cfg(feature = "sqlite")]
mod sqlite;

use sqlx::{Database, Pool};

use self::schema::INSERT;
use super::{AuditError, AuditRecord, AuditTrail};
use crate::sql::Dialect;
use crate::util::BoxFuture;

#[cfg(feature = "postgres")]
pub use postgres::PostgresAudit;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteAudit;

/// An [`AuditTrail`] in an SQL database, through an sqlx 0.8 pool: one
/// row of the table `toolwright_audit` per record, committed before
/// `record` returns.
///
/// Name it by its database, as sqlx names its pools: `SqliteAudit`
/// (`SqlAudit<Sqlite>`, feature `sqlite`) and `PostgresAudit`
/// (`SqlAudit<Postgres>`, feature `postgres`), each made by its `connect`.
/// Both keep the same columns and run the same statement.
///
/// Columns: `seq` (the order of the records), `kind` (`call`, `decision`,
/// `decision_refused`, `registry`), `at` (Unix milliseconds), `call_id`, `tool_key`,
/// `tool_name`, `effect`, `actor` (who called, decided, or changed the
/// registry), `arguments` (masked JSON), `digest`, `policy`, `policy_rule`,
/// `approval_id`, `approval_use` (`requested`, `consumed`, `decided`),
/// `outcome`, `error` (the application-facing text), `reason`,
/// `requested_by`, `duration_ms`, `tool_keys` (a registry change's keys,
/// JSON) and `generation`.
///
/// ```
/// use toolwright::audit::{AuditTrail, SqlAudit};
/// use toolwright::{Catalog, Container, Executor};
///
/// /// An executor whose calls are recorded in either database.
/// fn audited<DB: sqlx::Database>(trail: SqlAudit<DB>) -> Executor
/// where
///     SqlAudit<DB>: AuditTrail,
/// {
///     let catalog = Catalog::builder().build().unwrap();
///     Executor::builder(catalog, Container::default()).audit(trail).build().unwrap()
/// }
/// # let _ = audited::<sqlx::Postgres>;
/// ```
#[derive(Debug)]
pub struct SqlAudit<DB: Database> {
    pool: Pool<DB>,
}

impl<DB: Database> Clone for SqlAudit<DB> {
    fn clone(&self) -> Self {
        SqlAudit {
            pool: self.pool.clone(),
        }
    }
}

impl<DB: Dialect> AuditTrail for SqlAudit<DB> {
    fn record<'a>(&'a self, record: &'a AuditRecord) -> BoxFuture<'a, Result<(), AuditError>> {
        Box::pin(async move {
            let mut conn = self.pool.acquire().await.map_err(AuditError::new)?;
            row::statement(INSERT, record)
                .execute::<DB>(&mut conn)
                .await
                .map_err(AuditError::new)
        })
    }
}

//! The ledger in an SQL database: one type, [`SqlLedger`], for SQLite and
//! PostgreSQL, its statements written once (the SQL layer says why).

#[cfg(feature = "postgres")]
mod postgres;
mod row;
mod schema;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::time::SystemTime;

use sqlx::{Database, Pool};

use self::schema::columns;
use super::ledger::{
    Approval, ApprovalLedger, LedgerError, NewApproval, Review, Settlement, Status,
};
use crate::request::{ApprovalId, Digest};
use crate::sql::{Dialect, Lock, Read as _, Statement};
use crate::util::BoxFuture;
use crate::util::time::to_unix_ms;

#[cfg(feature = "postgres")]
pub use postgres::PostgresLedger;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteLedger;

/// An [`ApprovalLedger`] in an SQL database, through an sqlx 0.8 pool:
/// requests, decisions and outcomes outlive the process, so an approval
/// whose call never settled is still there for a person to reconcile.
///
/// Name it by its database, as sqlx names its pools: `SqliteLedger`
/// (`SqlLedger<Sqlite>`, feature `sqlite`) and `PostgresLedger`
/// (`SqlLedger<Postgres>`, feature `postgres`), each made by its
/// `connect`. Both keep the same table, `toolwright_approvals`, and run the
/// same statements; each operation is one statement or one transaction,
/// so any number of pools, processes or replicas keep the rules: an
/// approval is consumed once.
///
/// ```
/// use toolwright::approval::Approvals;
/// use toolwright::approval::{ApprovalLedger, SqlLedger};
///
/// /// The rules over a ledger in either database.
/// fn approvals<DB: sqlx::Database>(ledger: SqlLedger<DB>) -> Approvals
/// where
///     SqlLedger<DB>: ApprovalLedger,
/// {
///     Approvals::builder(ledger).max_pending(10).build()
/// }
/// # let _ = approvals::<sqlx::Postgres>;
/// ```
#[derive(Debug)]
pub struct SqlLedger<DB: Database> {
    pool: Pool<DB>,
}

impl<DB: Database> Clone for SqlLedger<DB> {
    fn clone(&self) -> Self {
        SqlLedger {
            pool: self.pool.clone(),
        }
    }
}

/// Two identical requests (and the rare pair of calls whose digests share
/// their first four bytes) take turns from the look to the insert.
fn record_lock(digest: &Digest) -> Lock {
    let [a, b, c, d, ..] = *digest.as_bytes();
    Lock {
        class: 0x7477_6171,
        key: i32::from_be_bytes([a, b, c, d]),
    }
}

/// The rows `statement` returns on a connection of `pool`, read back as
/// approvals.
async fn approvals<DB: Dialect>(
    pool: &Pool<DB>,
    statement: Statement,
) -> Result<Vec<Approval>, LedgerError> {
    let db = LedgerError::unavailable;
    let mut conn = pool.acquire().await.map_err(db)?;
    let rows = statement.fetch_all::<DB>(&mut conn).await.map_err(db)?;
    rows.iter().map(row::approval).collect()
}

/// The one approval `statement` returns, if any.
async fn approval<DB: Dialect>(
    pool: &Pool<DB>,
    statement: Statement,
) -> Result<Option<Approval>, LedgerError> {
    Ok(approvals(pool, statement).await?.pop())
}

impl<DB: Dialect> ApprovalLedger for SqlLedger<DB> {
    fn record(&self, new: NewApproval) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let db = LedgerError::unavailable;
            let digest = new.request.digest.to_string();
            let mut tx = DB::begin_locked(&self.pool, record_lock(&new.request.digest))
                .await
                .map_err(db)?;
            let waiting = Statement::new(concat!(
                "SELECT ",
                columns!(),
                " FROM toolwright_approvals
                  WHERE digest = $1 AND requested_by = $2 AND status = 'pending'
                    AND expires_at > $3
                  ORDER BY id DESC LIMIT 1"
            ))
            .bind(digest.as_str())
            .bind(new.requested_by.as_str())
            .bind(to_unix_ms(new.requested_at))
            .fetch_optional::<DB>(&mut tx)
            .await
            .map_err(db)?;
            let row = match waiting {
                Some(row) => row,
                None => Statement::new(concat!(
                    "INSERT INTO toolwright_approvals
                        (tool_key, tool_name, arguments, digest, requested_by, requested_at,
                         expires_at, status)
                     VALUES ($1, $2, $3{as_json}, $4, $5, $6, $7, 'pending')
                     RETURNING ",
                    columns!()
                ))
                .bind(new.request.key.as_str())
                .bind(new.request.name.as_str())
                .bind(new.request.arguments.to_string())
                .bind(digest)
                .bind(new.requested_by.as_str())
                .bind(to_unix_ms(new.requested_at))
                .bind(to_unix_ms(new.expires_at))
                .fetch_one::<DB>(&mut tx)
                .await
                .map_err(db)?,
            };
            tx.commit().await.map_err(db)?;
            row::approval(&row)
        })
    }

    fn get(&self, id: ApprovalId) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let stored = row::stored_id(id).ok_or(LedgerError::Unknown(id))?;
            let statement = Statement::new(concat!(
                "SELECT ",
                columns!(),
                " FROM toolwright_approvals WHERE id = $1"
            ));
            let found = approval(&self.pool, statement.bind(stored)).await?;
            found.ok_or(LedgerError::Unknown(id))
        })
    }

    fn latest<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        let statement = Statement::new(concat!(
            "SELECT ",
            columns!(),
            " FROM toolwright_approvals WHERE digest = $1 AND requested_by = $2
              ORDER BY id DESC LIMIT 1"
        ));
        Box::pin(approval(
            &self.pool,
            statement.bind(digest.to_string()).bind(requested_by),
        ))
    }

    fn list(
        &self,
        status: Status,
        now: SystemTime,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        // The one page that holds them all.
        self.list_after(status, now, None, usize::MAX)
    }

    fn list_after(
        &self,
        status: Status,
        now: SystemTime,
        after: Option<ApprovalId>,
        limit: usize,
    ) -> BoxFuture<'_, Result<Vec<Approval>, LedgerError>> {
        // An id past what a row can have leaves nothing after it.
        let after = match after.map(row::stored_id) {
            None => 0,
            Some(Some(after)) => after,
            Some(None) => return Box::pin(async { Ok(Vec::new()) }),
        };
        let statement = Statement::new(concat!(
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
        .bind(i64::try_from(limit).unwrap_or(i64::MAX));
        Box::pin(approvals(&self.pool, statement))
    }

    fn pending_count<'a>(
        &'a self,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<usize, LedgerError>> {
        Box::pin(async move {
            let db = LedgerError::unavailable;
            let mut conn = self.pool.acquire().await.map_err(db)?;
            let count = Statement::new(
                "SELECT COUNT(*) AS pending FROM toolwright_approvals
                 WHERE status = 'pending' AND requested_by = $1 AND expires_at > $2",
            )
            .bind(requested_by)
            .bind(to_unix_ms(now))
            .fetch_one::<DB>(&mut conn)
            .await
            .and_then(|row| row.int("pending"))
            .map_err(db)?;
            Ok(usize::try_from(count).unwrap_or(0))
        })
    }

    fn decide(
        &self,
        id: ApprovalId,
        decision: Review,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let stored = row::stored_id(id).ok_or(LedgerError::Unknown(id))?;
            let status = if decision.approve {
                Status::Approved
            } else {
                Status::Rejected
            };
            let statement = Statement::new(concat!(
                "UPDATE toolwright_approvals
                 SET status = $2, decided_by = $3, decided_at = $4, reason = $5
                 WHERE id = $1 AND status = 'pending' AND expires_at > $4
                 RETURNING ",
                columns!()
            ))
            .bind(stored)
            .bind(status.as_str())
            .bind(decision.by)
            .bind(to_unix_ms(decision.at))
            .bind(decision.reason);
            match approval(&self.pool, statement).await? {
                Some(decided) => Ok(decided),
                None => Err(row::not_decided(id, self.get(id).await)),
            }
        })
    }

    fn consume<'a>(
        &'a self,
        digest: &'a Digest,
        requested_by: &'a str,
        now: SystemTime,
    ) -> BoxFuture<'a, Result<Option<Approval>, LedgerError>> {
        // One statement: of any number of consumers, one finds the row
        // still approved. Where rows are locked one by one, the row is
        // locked as it is picked, a concurrent consumer skips it rather
        // than wait, and `status` is checked again once it is locked.
        let statement = Statement::new(concat!(
            "UPDATE toolwright_approvals SET status = 'consumed', consumed_at = $3
             WHERE id = (
                 SELECT id FROM toolwright_approvals
                 WHERE digest = $1 AND requested_by = $2 AND status = 'approved'
                   AND expires_at > $3
                 ORDER BY id LIMIT 1
                 {skip_locked}
             )
             AND status = 'approved'
             RETURNING ",
            columns!()
        ))
        .bind(digest.to_string())
        .bind(requested_by)
        .bind(to_unix_ms(now));
        Box::pin(approval(&self.pool, statement))
    }

    fn settle(
        &self,
        id: ApprovalId,
        settlement: Settlement,
        at: SystemTime,
    ) -> BoxFuture<'_, Result<Approval, LedgerError>> {
        Box::pin(async move {
            let stored = row::stored_id(id).ok_or(LedgerError::Unknown(id))?;
            let statement = Statement::new(concat!(
                "UPDATE toolwright_approvals
                 SET status = 'settled', settled_at = $2, settlement = $3
                 WHERE id = $1 AND status = 'consumed'
                 RETURNING ",
                columns!()
            ))
            .bind(stored)
            .bind(to_unix_ms(at))
            .bind(settlement.as_str());
            match approval(&self.pool, statement).await? {
                Some(settled) => Ok(settled),
                None => Err(row::not_settled(id, self.get(id).await)),
            }
        })
    }
}

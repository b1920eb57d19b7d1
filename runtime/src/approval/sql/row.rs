//! How a stored row reads back as an [`Approval`], and why a guarded
//! update found nothing to change.

use crate::approval::ledger::{Approval, LedgerError, Settlement, Status};
use crate::error::BoxError;
use crate::request::{ApprovalId, ApprovalRequest, Digest};
use crate::sql::Read;
use crate::util::time::from_unix_ms;

/// A row that does not read back as an approval: written by something
/// other than this ledger, or damaged.
#[derive(Debug, thiserror::Error)]
#[error("approval row {id}: column `{column}` holds no valid value")]
struct Corrupt {
    id: i64,
    column: &'static str,
    #[source]
    source: BoxError,
}

/// The id as the database stores it; `None` for an id no row can have.
pub(super) fn stored_id(id: ApprovalId) -> Option<i64> {
    i64::try_from(id.0).ok()
}

/// The approval in `row`, which has the ledger's columns by name.
pub(super) fn approval<R: Read>(row: &R) -> Result<Approval, LedgerError> {
    let id = row.int("id").map_err(LedgerError::unavailable)?;
    let get = Columns { row, id };
    let approval_id = u64::try_from(id)
        .map(ApprovalId)
        .map_err(|e| get.corrupt("id", e.into()))?;
    let requested_by = get.value("requested_by", R::text)?;
    Ok(Approval {
        id: approval_id,
        request: ApprovalRequest {
            key: get.value("tool_key", R::text)?,
            name: get.value("tool_name", R::text)?,
            arguments: get.parsed("arguments", R::text, |text| {
                serde_json::from_str::<serde_json::Value>(&text)
            })?,
            digest: get.parsed("digest", R::text, |text| text.parse::<Digest>())?,
            id: Some(approval_id),
            requested_by: Some(requested_by.clone()),
        },
        requested_by,
        requested_at: get.value("requested_at", R::int).map(from_unix_ms)?,
        expires_at: get.value("expires_at", R::int).map(from_unix_ms)?,
        status: get.parsed("status", R::text, |text| text.parse::<Status>())?,
        decided_by: get.value("decided_by", R::maybe_text)?,
        decided_at: get.value("decided_at", R::maybe_int)?.map(from_unix_ms),
        reason: get.value("reason", R::maybe_text)?,
        consumed_at: get.value("consumed_at", R::maybe_int)?.map(from_unix_ms),
        settled_at: get.value("settled_at", R::maybe_int)?.map(from_unix_ms),
        settlement: get.parsed("settlement", R::maybe_text, |text| {
            text.map(|text| text.parse::<Settlement>()).transpose()
        })?,
    })
}

/// How a column is read: one of [`Read`]'s methods.
type Reader<R, T> = fn(&R, &'static str) -> Result<T, sqlx::Error>;

/// The columns of the row `id`, each read back or reported as corrupt.
struct Columns<'a, R> {
    row: &'a R,
    id: i64,
}

impl<R: Read> Columns<'_, R> {
    fn value<T>(&self, column: &'static str, read: Reader<R, T>) -> Result<T, LedgerError> {
        read(self.row, column).map_err(|e| self.corrupt(column, e.into()))
    }

    fn parsed<S, T, E>(
        &self,
        column: &'static str,
        read: Reader<R, S>,
        parse: impl FnOnce(S) -> Result<T, E>,
    ) -> Result<T, LedgerError>
    where
        E: Into<BoxError>,
    {
        parse(self.value(column, read)?).map_err(|e| self.corrupt(column, e.into()))
    }

    fn corrupt(&self, column: &'static str, source: BoxError) -> LedgerError {
        LedgerError::unavailable(Corrupt {
            id: self.id,
            column,
            source,
        })
    }
}

/// Why `decide` changed nothing, from request `id` as it is now.
/// Statuses only move forward, so a request still pending after the
/// guarded update failed had expired.
pub(super) fn not_decided(id: ApprovalId, now: Result<Approval, LedgerError>) -> LedgerError {
    match now {
        Ok(approval) if approval.status == Status::Pending => LedgerError::Expired(id),
        Ok(approval) => LedgerError::NotPending {
            id,
            status: approval.status,
        },
        Err(error) => error,
    }
}

/// Why `settle` changed nothing, from request `id` as it is now.
pub(super) fn not_settled(id: ApprovalId, now: Result<Approval, LedgerError>) -> LedgerError {
    match now {
        Ok(approval) => LedgerError::NotConsumed {
            id,
            status: approval.status,
        },
        Err(error) => error,
    }
}

//! What the SQLite and PostgreSQL ledgers share: the schema's versions,
//! how a stored row reads back as an [`Approval`], and why a guarded
//! update found nothing to change.

use std::time::SystemTime;

use sqlx::{ColumnIndex, Decode, Row, Type};

use super::ledger::{Approval, LedgerError, Settlement, Status, from_unix_ms};
use crate::error::BoxError;
use crate::request::{ApprovalId, ApprovalRequest, Digest};

/// The approvals' name in the shared `toolwright_schema` table, which
/// records each store's schema version so that a later toolwright can
/// migrate it.
pub(super) const COMPONENT: &str = "approvals";

/// The steps of `migrations` (one list of statements per version, the
/// first bringing version 0 to 1) that a schema at version `found` lacks,
/// with the version they reach.
///
/// A schema newer than this build knows is refused: the rows may mean
/// what this build cannot tell.
pub(super) fn missing(
    migrations: &'static [&'static [&'static str]],
    found: Option<i64>,
) -> Result<(&'static [&'static [&'static str]], i64), LedgerError> {
    let known = migrations.len();
    let found = found.unwrap_or(0);
    match usize::try_from(found) {
        Ok(at) if at <= known => Ok((&migrations[at..], known as i64)),
        _ => Err(LedgerError::unavailable(SchemaTooNew { found, known })),
    }
}

/// The store's schema is of a later toolwright.
#[derive(Debug, thiserror::Error)]
#[error(
    "the approvals schema is at version {found}, newer than the {known} this build of toolwright knows"
)]
struct SchemaTooNew {
    found: i64,
    known: usize,
}

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
pub(super) fn approval<R>(row: &R) -> Result<Approval, LedgerError>
where
    R: Row,
    &'static str: ColumnIndex<R>,
    for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    for<'r> String: Decode<'r, R::Database> + Type<R::Database>,
{
    let id: i64 = row.try_get("id").map_err(LedgerError::unavailable)?;
    let get = Columns { row, id };
    let approval_id = u64::try_from(id)
        .map(ApprovalId)
        .map_err(|e| get.corrupt("id", e.into()))?;
    let requested_by: String = get.value("requested_by")?;
    Ok(Approval {
        id: approval_id,
        request: ApprovalRequest {
            key: get.value("tool_key")?,
            name: get.value("tool_name")?,
            arguments: get.parsed("arguments", |text: String| {
                serde_json::from_str::<serde_json::Value>(&text)
            })?,
            digest: get.parsed("digest", |text: String| text.parse::<Digest>())?,
            id: Some(approval_id),
            requested_by: Some(requested_by.clone()),
        },
        requested_by,
        requested_at: get.time("requested_at")?,
        expires_at: get.time("expires_at")?,
        status: get.parsed("status", |text: String| text.parse::<Status>())?,
        decided_by: get.value("decided_by")?,
        decided_at: get.value::<Option<i64>>("decided_at")?.map(from_unix_ms),
        reason: get.value("reason")?,
        consumed_at: get.value::<Option<i64>>("consumed_at")?.map(from_unix_ms),
        settled_at: get.value::<Option<i64>>("settled_at")?.map(from_unix_ms),
        settlement: get.parsed("settlement", |text: Option<String>| {
            text.map(|text| text.parse::<Settlement>()).transpose()
        })?,
    })
}

/// The columns of the row `id`, each read back or reported as corrupt.
struct Columns<'a, R> {
    row: &'a R,
    id: i64,
}

impl<R> Columns<'_, R>
where
    R: Row,
    &'static str: ColumnIndex<R>,
{
    fn value<T>(&self, column: &'static str) -> Result<T, LedgerError>
    where
        for<'r> T: Decode<'r, R::Database> + Type<R::Database>,
    {
        self.row
            .try_get(column)
            .map_err(|e| self.corrupt(column, e.into()))
    }

    fn parsed<S, T, E>(
        &self,
        column: &'static str,
        parse: impl FnOnce(S) -> Result<T, E>,
    ) -> Result<T, LedgerError>
    where
        for<'r> S: Decode<'r, R::Database> + Type<R::Database>,
        E: Into<BoxError>,
    {
        parse(self.value(column)?).map_err(|e| self.corrupt(column, e.into()))
    }

    fn time(&self, column: &'static str) -> Result<SystemTime, LedgerError>
    where
        for<'r> i64: Decode<'r, R::Database> + Type<R::Database>,
    {
        self.value(column).map(from_unix_ms)
    }

    fn corrupt(&self, column: &'static str, source: BoxError) -> LedgerError {
        LedgerError::unavailable(Corrupt {
            id: self.id,
            column,
            source,
        })
    }
}

/// Why `decide` changed nothing, from the status of request `id` now
/// (`None`: no such row). Statuses only move forward, so a request still
/// pending after the guarded update failed had expired.
pub(super) fn not_decided(id: ApprovalId, found: Option<String>) -> LedgerError {
    match found.map(|status| status.parse::<Status>()) {
        None => LedgerError::Unknown(id),
        Some(Ok(Status::Pending)) => LedgerError::Expired(id),
        Some(Ok(status)) => LedgerError::NotPending { id, status },
        Some(Err(e)) => LedgerError::unavailable(e),
    }
}

/// Why `settle` changed nothing, from the status of request `id` now.
pub(super) fn not_settled(id: ApprovalId, found: Option<String>) -> LedgerError {
    match found.map(|status| status.parse::<Status>()) {
        None => LedgerError::Unknown(id),
        Some(Ok(status)) => LedgerError::NotConsumed { id, status },
        Some(Err(e)) => LedgerError::unavailable(e),
    }
}

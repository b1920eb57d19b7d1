//! `api/approvals`: the requests waiting for a person, and their
//! decisions, under the approvals' rules (four eyes, the approver's role).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Extension, Path, State};
use axum::response::Response;
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::api::{self, Failure};
use super::{Operator, Shared, etag};
use crate::approval::{Approval, ApprovalId, LedgerError};
use crate::observe::{REDACTED, redact};
use crate::registry::Snapshot;

/// `GET api/approvals`: `{"approvals": [Approval]}`, pending ones, secret
/// arguments masked; an empty list when the executor has no approvals.
pub(crate) async fn list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let (body, tag) = pending(&shared).await?;
    if etag::unchanged(&headers, &tag) {
        return Ok(api::not_modified(&tag));
    }
    Ok(api::json(&body, Some(&tag)))
}

/// The body of a decision: why (optional).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Decide {
    #[serde(default)]
    reason: String,
}

/// `POST api/approvals/{id}/approve` `{"reason"}`.
pub(crate) async fn approve(
    state: State<Arc<Shared>>,
    operator: Extension<Arc<Operator>>,
    id: Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    decide(state, operator, id, headers, body, true).await
}

/// `POST api/approvals/{id}/reject` `{"reason"}`.
pub(crate) async fn reject(
    state: State<Arc<Shared>>,
    operator: Extension<Arc<Operator>>,
    id: Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    decide(state, operator, id, headers, body, false).await
}

/// Decides the request `id` as the operator, if the request's `If-Match`
/// names the pending list as it is: the approval as decided.
async fn decide(
    State(shared): State<Arc<Shared>>,
    Extension(operator): Extension<Arc<Operator>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
    approve: bool,
) -> Result<Response, Failure> {
    let Decide { reason } = api::read_json(&headers, body, shared.body_limit).await?;
    let unknown = || Failure::not_found(format!("no approval request has id {id}"));
    let id = id.parse::<u64>().map(ApprovalId).map_err(|_| unknown())?;
    let approvals = shared.executor.approvals().ok_or_else(unknown)?;
    let _turn = shared.writing.lock().await;
    // 404 and 409 before the precondition: a stale page learns why.
    let current = approvals.get(id).await.map_err(failure)?;
    if current.status != crate::approval::Status::Pending {
        return Err(failure(LedgerError::NotPending {
            id,
            status: current.status,
        }));
    }
    let (_, tag) = pending(&shared).await?;
    etag::require(&headers, &tag)?;
    let reason = reason.trim();
    let decided = if approve {
        approvals.approve(id, &*operator, reason).await
    } else {
        approvals.reject(id, &*operator, reason).await
    }
    .map_err(failure)?;
    let snapshot = shared.executor.registry().snapshot();
    let (_, tag) = pending(&shared).await?;
    Ok(api::json(&masked(&decided, &snapshot), Some(&tag)))
}

/// The pending list as answered, and its ETag.
async fn pending(shared: &Shared) -> Result<(Value, String), Failure> {
    let list = match shared.executor.approvals() {
        Some(approvals) => approvals.pending().await.map_err(failure)?,
        None => Vec::new(),
    };
    let snapshot = shared.executor.registry().snapshot();
    let list: Vec<Value> = list.iter().map(|a| masked(a, &snapshot)).collect();
    let body = json!({ "approvals": list });
    let bytes = serde_json::to_vec(&body).unwrap_or_default();
    Ok((body, etag::of_bytes('a', &bytes)))
}

/// `approval` as the admin shows it: the value of every argument its
/// tool's input schema marks `writeOnly` masked; every value masked when
/// the registry no longer serves its tool (nothing says which are secret).
pub(crate) fn masked(approval: &Approval, snapshot: &Snapshot) -> Value {
    let mut approval = approval.clone();
    let arguments = &approval.request.arguments;
    approval.request.arguments = match snapshot.catalog.get_by_key(&approval.request.key) {
        Some(tool) => redact(tool.input_schema(), arguments),
        None => match arguments {
            Value::Object(values) => Value::Object(
                values
                    .keys()
                    .map(|name| (name.clone(), Value::from(REDACTED)))
                    .collect::<Map<_, _>>(),
            ),
            Value::Null => Value::Null,
            _ => Value::from(REDACTED),
        },
    };
    serde_json::to_value(&approval).unwrap_or(Value::Null)
}

/// A ledger's refusal as an answer: 403 for the rules (four eyes, role),
/// 404 for an unknown request, 409 for one no longer pending.
fn failure(error: LedgerError) -> Failure {
    let status = match &error {
        LedgerError::OwnRequest { .. } | LedgerError::NotAnApprover { .. } => StatusCode::FORBIDDEN,
        LedgerError::Unknown(_) | LedgerError::NoLedger => StatusCode::NOT_FOUND,
        LedgerError::NotPending { .. }
        | LedgerError::Expired(_)
        | LedgerError::NotConsumed { .. } => StatusCode::CONFLICT,
        LedgerError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    Failure::new(status, error.to_string())
}

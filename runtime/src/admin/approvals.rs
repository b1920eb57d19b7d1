//! `api/approvals`: the requests waiting for a person, and their
//! decisions, under the approvals' rules (four eyes, the approver's role).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Extension, Path, State};
use axum::response::Response;
use http::{HeaderMap, StatusCode, Uri};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::api::{self, Failure};
use super::{Operator, Shared, etag};
use crate::approval::{Approval, ApprovalId, Approvals, LedgerError, Status};
use crate::observe::{REDACTED, redact};
use crate::registry::Snapshot;

/// How many requests a page holds unless `limit` says.
const DEFAULT_LIMIT: usize = 50;
/// The most requests one page holds.
const MAX_LIMIT: usize = 200;

/// `GET api/approvals?after=<id>&limit=<n>`: `{"approvals": [Approval],
/// "next"}`, the pending requests after `after`, oldest first, secret
/// arguments masked, each with its `etag`; `next` is the `after` of the
/// next page (`null` on the last). An empty list when the executor has no
/// approvals.
pub(crate) async fn list(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let (after, limit) = api::paging(&uri, "after", DEFAULT_LIMIT, MAX_LIMIT)?;
    let after = (after > 0).then_some(ApprovalId(after));
    let (page, next) = match shared.executor.approvals() {
        // One more than the page, to tell whether another follows.
        Some(approvals) => {
            let mut page = approvals
                .pending_page(after, limit + 1)
                .await
                .map_err(failure)?;
            let more = page.len() > limit;
            page.truncate(limit);
            let next = more.then(|| page.last().map(|a| a.id)).flatten();
            (page, next)
        }
        None => (Vec::new(), None),
    };
    let snapshot = shared.executor.registry().snapshot();
    let page: Vec<Value> = page.iter().map(|a| shown(a, &snapshot)).collect();
    let body = json!({ "approvals": page, "next": next });
    let tag = etag::of_bytes('a', &serde_json::to_vec(&body).unwrap_or_default());
    if etag::unchanged(&headers, &tag) {
        return Ok(api::not_modified(&tag));
    }
    Ok(api::json(&body, Some(&tag)))
}

/// `GET api/approvals/{id}`: the request `id`, whatever its status, with
/// its own ETag; 404 when unknown.
pub(crate) async fn one(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let (approvals, id) = find(&shared, &id)?;
    let approval = approvals.get(id).await.map_err(failure)?;
    let tag = etag::approval(approval.id, approval.status);
    if etag::unchanged(&headers, &tag) {
        return Ok(api::not_modified(&tag));
    }
    let snapshot = shared.executor.registry().snapshot();
    Ok(api::json(&shown(&approval, &snapshot), Some(&tag)))
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
/// names that request's ETag (other requests coming and going leave it
/// as it is): the approval as decided, with its new ETag.
async fn decide(
    State(shared): State<Arc<Shared>>,
    Extension(operator): Extension<Arc<Operator>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
    approve: bool,
) -> Result<Response, Failure> {
    let Decide { reason } = api::read_json(&headers, body, shared.body_limit).await?;
    let (approvals, id) = find(&shared, &id)?;
    let _turn = shared.writing.lock().await;
    // 404 and 409 before the precondition: a stale page learns why.
    let current = approvals.get(id).await.map_err(failure)?;
    if current.status != Status::Pending {
        return Err(failure(LedgerError::NotPending {
            id,
            status: current.status,
        }));
    }
    etag::require(&headers, &etag::approval(id, current.status))?;
    let reason = reason.trim();
    let decided = if approve {
        approvals.approve(id, &*operator, reason).await
    } else {
        approvals.reject(id, &*operator, reason).await
    }
    .map_err(failure)?;
    let snapshot = shared.executor.registry().snapshot();
    let tag = etag::approval(decided.id, decided.status);
    Ok(api::json(&shown(&decided, &snapshot), Some(&tag)))
}

/// The executor's approvals and the id in the path; 404 for an id that
/// is not a number, or an executor without approvals.
fn find<'a>(shared: &'a Shared, id: &str) -> Result<(&'a Approvals, ApprovalId), Failure> {
    let unknown = || Failure::not_found(format!("no approval request has id {id}"));
    let id = id.parse::<u64>().map(ApprovalId).map_err(|_| unknown())?;
    let approvals = shared.executor.approvals().ok_or_else(unknown)?;
    Ok((approvals, id))
}

/// `approval` as the API answers it: [`masked`], with its ETag.
fn shown(approval: &Approval, snapshot: &Snapshot) -> Value {
    let mut shown = masked(approval, snapshot);
    if let Some(object) = shown.as_object_mut() {
        let tag = etag::approval(approval.id, approval.status);
        object.insert("etag".to_owned(), Value::from(tag));
    }
    shown
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
/// 404 for an unknown request, 409 for one no longer pending (429 for a
/// requester's cap, which no admin request meets).
fn failure(error: LedgerError) -> Failure {
    let status = match &error {
        LedgerError::OwnRequest { .. } | LedgerError::NotAnApprover { .. } => StatusCode::FORBIDDEN,
        LedgerError::Unknown(_) | LedgerError::NoLedger => StatusCode::NOT_FOUND,
        LedgerError::NotPending { .. }
        | LedgerError::Expired(_)
        | LedgerError::NotConsumed { .. } => StatusCode::CONFLICT,
        LedgerError::TooManyPending { .. } => StatusCode::TOO_MANY_REQUESTS,
        LedgerError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    Failure::new(status, error.to_string())
}

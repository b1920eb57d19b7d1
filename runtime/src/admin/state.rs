//! `api/state`: the registry's state exported, and imported back.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Extension, State};
use axum::response::Response;
use http::HeaderMap;
use serde_json::json;

use super::api::{self, Failure};
use super::{Operator, Shared, etag, trail};
use crate::Principal;
use crate::audit::RegistryAction;
use crate::registry::RegistryState;

/// `GET api/state`: the `RegistryState`, with the registry's ETag.
pub(crate) async fn export(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let state = shared.executor.registry().state();
    let tag = etag::registry(state.generation);
    if etag::unchanged(&headers, &tag) {
        return api::not_modified(&tag);
    }
    api::json(&state, Some(&tag))
}

/// `PUT api/state` with a `RegistryState`, restored by the operator
/// ([`Registry::restore_by`](crate::registry::Registry::restore_by)) and
/// recorded in the audit trail as theirs: `{"generation", "changed",
/// "unknown", "unknown_namespaces"}`, the keys whose state changed and the
/// keys and namespaces the registry does not serve (left aside, not an
/// error).
pub(crate) async fn import(
    State(shared): State<Arc<Shared>>,
    Extension(operator): Extension<Arc<Operator>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    let state: RegistryState = api::read_json(&headers, body, shared.body_limit).await?;
    let _turn = shared.writing.lock().await;
    let registry = shared.executor.registry();
    etag::require(&headers, &etag::registry(registry.generation()))?;
    let restored = registry
        .restore_by(&state, operator.id())
        .map_err(|error| Failure::bad_request(error.to_string()))?;
    let action = RegistryAction::Restored;
    trail::record(&shared, action, operator.id(), &restored.change, None).await?;
    let body = json!({
        "generation": restored.change.generation,
        "changed": restored.change.keys,
        "unknown": restored.unknown,
        "unknown_namespaces": restored.unknown_namespaces,
    });
    Ok(api::json(
        &body,
        Some(&etag::registry(restored.change.generation)),
    ))
}

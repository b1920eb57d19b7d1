//! `api/tools`: every tool with its state, schemas and policy; switching
//! one off with a reason, and on again.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Extension, Path, State};
use axum::response::Response;
use http::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};

use super::api::{self, Failure};
use super::{Operator, Shared, etag, trail};
use crate::Principal;
use crate::audit::RegistryAction;
use crate::catalog::ToolEntry;
use crate::disabled::Disabled;
use crate::pipeline::Gate;
use crate::registry::{Change, Reason, RegistryError, Selector, Snapshot};

/// `GET api/tools`: `{"generation", "tools": [Tool]}`, disabled ones too.
pub(crate) async fn list(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let snapshot = shared.executor.registry().snapshot();
    let tag = etag::registry(snapshot.generation);
    if etag::unchanged(&headers, &tag) {
        return api::not_modified(&tag);
    }
    let tools: Vec<Value> = (0..snapshot.catalog.len())
        .map(|index| describe(&snapshot, index))
        .collect();
    let body = json!({"generation": snapshot.generation, "tools": tools});
    api::json(&body, Some(&tag))
}

/// `GET api/tools/{name}`: one Tool.
pub(crate) async fn one(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let snapshot = shared.executor.registry().snapshot();
    let index = find(&snapshot, &name)?;
    let tag = etag::registry(snapshot.generation);
    if etag::unchanged(&headers, &tag) {
        return Ok(api::not_modified(&tag));
    }
    Ok(api::json(&describe(&snapshot, index), Some(&tag)))
}

/// The body of a disable: why.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Disable {
    reason: String,
}

/// The body of an enable: nothing (`{}`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Enable {}

/// `POST api/tools/{name}/disable` `{"reason"}`: the tool as it is now.
pub(crate) async fn disable(
    State(shared): State<Arc<Shared>>,
    Extension(operator): Extension<Arc<Operator>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    let Disable { reason } = api::read_json(&headers, body, shared.body_limit).await?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Failure::bad_request(
            "a reason is required to disable a tool",
        ));
    }
    let recorded = Recorded {
        action: RegistryAction::Disabled,
        by: operator.id(),
        reason: Some(reason),
    };
    let reason = Reason::new(reason).by(operator.id());
    change(&shared, &name, &headers, Some(recorded), |selector| {
        shared.executor.registry().disable(selector, reason)
    })
    .await
}

/// `POST api/tools/{name}/enable` `{}`: the tool as it is now.
pub(crate) async fn enable(
    State(shared): State<Arc<Shared>>,
    Extension(operator): Extension<Arc<Operator>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    let Enable {} = api::read_json(&headers, body, shared.body_limit).await?;
    let recorded = Recorded {
        action: RegistryAction::Enabled,
        by: operator.id(),
        reason: None,
    };
    change(&shared, &name, &headers, Some(recorded), |selector| {
        shared.executor.registry().enable(selector)
    })
    .await
}

/// `POST api/tools/{name}/defer` `{}`: the tool as it is now, deferred
/// (left out of a first tool list, found by a search).
pub(crate) async fn defer(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    deferral(shared, name, headers, body, true).await
}

/// `POST api/tools/{name}/undefer` `{}`: the tool as it is now, listed up
/// front.
pub(crate) async fn undefer(
    State(shared): State<Arc<Shared>>,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, Failure> {
    deferral(shared, name, headers, body, false).await
}

async fn deferral(
    shared: Arc<Shared>,
    name: String,
    headers: HeaderMap,
    body: Body,
    deferred: bool,
) -> Result<Response, Failure> {
    let Enable {} = api::read_json(&headers, body, shared.body_limit).await?;
    change(&shared, &name, &headers, None, |selector| {
        shared.executor.registry().defer(selector, deferred)
    })
    .await
}

/// What an operator's change is recorded as in the audit trail.
struct Recorded<'a> {
    action: RegistryAction,
    by: &'a str,
    reason: Option<&'a str>,
}

/// Makes `apply` to the tool `name` if the request's `If-Match` names the
/// registry as it is, records it in the audit trail as `recorded` says,
/// and answers with the tool after it.
async fn change(
    shared: &Shared,
    name: &str,
    headers: &HeaderMap,
    recorded: Option<Recorded<'_>>,
    apply: impl FnOnce(&Selector) -> Result<Change, RegistryError>,
) -> Result<Response, Failure> {
    let _turn = shared.writing.lock().await;
    let registry = shared.executor.registry();
    let before = registry.snapshot();
    find(&before, name)?;
    etag::require(headers, &etag::registry(before.generation))?;
    let change = apply(&Selector::name(name)).map_err(|error| match error {
        RegistryError::NoMatch { .. } => unknown(name),
        other => Failure::new(http::StatusCode::CONFLICT, other.to_string()),
    })?;
    if let Some(Recorded { action, by, reason }) = recorded {
        trail::record(shared, action, by, &change, reason).await?;
    }
    let after = registry.snapshot();
    let index = find(&after, name)?;
    let tag = etag::registry(after.generation);
    Ok(api::json(&describe(&after, index), Some(&tag)))
}

/// Where the tool called `name` is in `snapshot`; 404 when it is not.
fn find(snapshot: &Snapshot, name: &str) -> Result<usize, Failure> {
    snapshot.catalog.index_of(name).ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> Failure {
    Failure::not_found(format!("no tool is called `{name}`"))
}

/// The Tool JSON of the tool at `index`.
pub(crate) fn describe(snapshot: &Snapshot, index: usize) -> Value {
    let tool = snapshot.catalog.entry(index);
    let disabled = snapshot.disabled[index].as_deref();
    json!({
        "name": tool.name(),
        "key": tool.key(),
        "namespace": namespace(tool),
        "title": tool.title(),
        "description": tool.description(),
        "effect": tool.effect(),
        "tags": tool.tags(),
        "idempotent": tool.idempotent(),
        "open_world": tool.open_world(),
        "enabled": disabled.is_none(),
        "disabled": disabled.map(disabled_json),
        "deferred": tool.deferred(),
        "search_hint": tool.search_hint(),
        "override": tool.overridden(),
        "input_schema": tool.input_schema(),
        "output_schema": tool.output_schema(),
        "policy": policy(snapshot, index),
    })
}

/// A tool's namespace: its key's segments before the last (`shop.orders`
/// for `shop.orders.get`); `None` for a one-segment key.
fn namespace(tool: &ToolEntry) -> Option<&str> {
    tool.key().rsplit_once('.').map(|(namespace, _)| namespace)
}

fn disabled_json(disabled: &Disabled) -> Value {
    // `Disabled` serializes `at` as Unix milliseconds already.
    serde_json::to_value(disabled).unwrap_or(Value::Null)
}

/// What the policy rules for every call of the tool at `index`: `null`
/// with no policy; `"depends"` when a rule on the arguments comes first,
/// so that each call is decided on its own.
fn policy(snapshot: &Snapshot, index: usize) -> Value {
    match snapshot.gate(index) {
        Gate::Open => Value::Null,
        Gate::Ruled(ruling) => {
            let mut value = serde_json::to_value(ruling.decision).unwrap_or(Value::Null);
            if let Some(object) = value.as_object_mut() {
                object.insert("rule".to_owned(), json!(ruling.rule));
            }
            value
        }
        Gate::OnArguments(_) => json!({"decision": "depends", "rule": null}),
    }
}

//! The tools as a REST API beside `/mcp` ([`HttpOptions::rest`]):
//! `POST /api/tools/{name}` runs a call through the same executor, views,
//! policy and approvals as MCP's `tools/call`, and `GET /api/openapi.json`
//! is the caller's [`openapi::document`].
//!
//! [`HttpOptions::rest`]: super::HttpOptions::rest

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use super::body::{collect, is_json};
use super::router::CallerContext;
use crate::error::CallError;
use crate::idempotency::Refusal;
use crate::mcp::handler::MAX_IDEMPOTENCY_KEY;
use crate::mcp::server::Shared;
use crate::openapi::{self, IDEMPOTENCY_HEADER};

/// Where the REST API is served, and what its document names as its server.
pub(super) const PREFIX: &str = "/api";

/// What the REST handlers share.
struct Rest<C> {
    shared: Arc<Shared<C>>,
    body_timeout: Duration,
    max_body_bytes: usize,
}

/// The REST API's routes, to merge before authentication is layered on.
pub(super) fn routes<C: Any + Send + Sync>(
    shared: Arc<Shared<C>>,
    body_timeout: Duration,
    max_body_bytes: usize,
) -> axum::Router {
    let rest = Arc::new(Rest {
        shared,
        body_timeout,
        max_body_bytes,
    });
    axum::Router::new()
        .route(
            &format!("{PREFIX}/tools/{{name}}"),
            axum::routing::post(call::<C>),
        )
        .route(
            &format!("{PREFIX}/openapi.json"),
            axum::routing::get(document::<C>),
        )
        .with_state(rest)
}

/// The caller's context, which authentication put in the request.
fn caller<C: Send + Sync + 'static>(request: &Request) -> Option<Arc<C>> {
    request
        .extensions()
        .get::<CallerContext<C>>()
        .map(|caller| caller.0.clone())
}

/// `GET /api/openapi.json`: the tools this caller may call.
async fn document<C: Any + Send + Sync>(
    State(rest): State<Arc<Rest<C>>>,
    request: Request,
) -> Response {
    let Some(ctx) = caller::<C>(&request) else {
        return error(StatusCode::UNAUTHORIZED, "no caller for this request");
    };
    let executor = rest.shared.executor_for(&ctx);
    let info = &rest.shared.implementation;
    let mut document = openapi::document(&executor.tools(), &info.name, &info.version);
    document["servers"] = json!([{ "url": PREFIX }]);
    json_answer(StatusCode::OK, &document)
}

/// `POST /api/tools/{name}`: one call, its answer as the document says.
async fn call<C: Any + Send + Sync>(
    State(rest): State<Arc<Rest<C>>>,
    Path(name): Path<String>,
    request: Request,
) -> Response {
    let Some(ctx) = caller::<C>(&request) else {
        return error(StatusCode::UNAUTHORIZED, "no caller for this request");
    };
    if !is_json(request.headers()) {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be JSON (`Content-Type: application/json`)",
        );
    }
    let idempotency_key = match idempotency_key(request.headers()) {
        Ok(key) => key,
        Err(why) => return error(StatusCode::BAD_REQUEST, &why),
    };
    let body = request.into_body();
    let bytes: Bytes =
        match tokio::time::timeout(rest.body_timeout, collect(body, rest.max_body_bytes)).await {
            Ok(Ok(bytes)) => bytes,
            Ok(Err(refused)) if refused.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                let message = format!(
                    "the request body is over the limit of {} bytes",
                    rest.max_body_bytes
                );
                return error(StatusCode::PAYLOAD_TOO_LARGE, &message);
            }
            Ok(Err(_)) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    "the request body could not be read",
                );
            }
            Err(_) => {
                let message = format!(
                    "the request body did not arrive within {:?}",
                    rest.body_timeout
                );
                return error(StatusCode::REQUEST_TIMEOUT, &message);
            }
        };
    let arguments: Value = match serde_json::from_slice(&bytes) {
        Ok(arguments) => arguments,
        Err(why) => {
            return error(
                StatusCode::BAD_REQUEST,
                &format!("the body is not JSON: {why}"),
            );
        }
    };
    let executor = rest.shared.executor_for(&ctx);
    let answer = match &idempotency_key {
        Some(key) => {
            executor
                .invoke_idempotent(key, &name, arguments, &*ctx)
                .await
        }
        None => executor.invoke(&name, arguments, &*ctx).await,
    };
    match answer {
        Ok(result) => json_answer(StatusCode::OK, &result),
        Err(refused) => refusal(&refused),
    }
}

/// The answer to a call that gave no result.
fn refusal(refused: &CallError) -> Response {
    let status = match refused {
        CallError::ApprovalRequired(request) => {
            return json_answer(StatusCode::ACCEPTED, request);
        }
        CallError::InvalidArguments { violations, .. } => {
            let body = json!({ "error": refused.model_message(), "violations": violations });
            return json_answer(StatusCode::UNPROCESSABLE_ENTITY, &body);
        }
        CallError::UnknownTool { .. } | CallError::Disabled { .. } => StatusCode::NOT_FOUND,
        CallError::PolicyDenied { .. }
        | CallError::Denied { .. }
        | CallError::NotApproved { .. } => StatusCode::FORBIDDEN,
        CallError::TooManyPending { .. } => StatusCode::TOO_MANY_REQUESTS,
        CallError::Tool { .. } => StatusCode::BAD_REQUEST,
        CallError::Timeout { .. } => StatusCode::GATEWAY_TIMEOUT,
        CallError::AuditFailed { .. } => StatusCode::SERVICE_UNAVAILABLE,
        CallError::NotRepeated { refusal, .. } => match refusal {
            // As the IETF's Idempotency-Key draft answers them.
            Refusal::Conflict => StatusCode::UNPROCESSABLE_ENTITY,
            Refusal::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::CONFLICT,
        },
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, &refused.model_message())
}

/// The request's `Idempotency-Key` header, if any; why not, for one that
/// is empty, longer than 255 bytes or not visible ASCII.
fn idempotency_key(headers: &http::HeaderMap) -> Result<Option<String>, String> {
    let Some(value) = headers.get(IDEMPOTENCY_HEADER) else {
        return Ok(None);
    };
    match value.to_str() {
        Ok(key) if !key.is_empty() && key.len() <= MAX_IDEMPOTENCY_KEY => Ok(Some(key.to_owned())),
        _ => Err(format!(
            "the `{IDEMPOTENCY_HEADER}` header must be 1 to {MAX_IDEMPOTENCY_KEY} visible ASCII characters"
        )),
    }
}

/// `{"error": message}` with `status`.
fn error(status: StatusCode, message: &str) -> Response {
    json_answer(status, &json!({ "error": message }))
}

/// `value` as a JSON body with `status`.
fn json_answer(status: StatusCode, value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => {
            let content_type = [(http::header::CONTENT_TYPE, "application/json")];
            (status, content_type, body).into_response()
        }
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

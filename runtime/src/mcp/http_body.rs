//! A request's body, read whole within its time and size limits before
//! rmcp sees it, and the JSON-RPC answers for bodies that are no message.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::util::excerpt::Excerpt;

/// JSON-RPC: the body is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: JSON, but not a request, notification or response.
const INVALID_REQUEST: i64 = -32600;

/// Reads a POST's body within `timeout` and `limit`, then hands it on.
///
/// A slow body cannot hold the request past `timeout` (408), one over
/// `limit` is refused as it arrives (413), and a body that is not a
/// JSON-RPC message gets 400 with the JSON-RPC error that says why, where
/// rmcp would answer 415 with serde's text.
pub(super) async fn read_body(
    timeout: Duration,
    limit: usize,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != http::Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(timeout, collect(body, limit)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(refused)) => return refused,
        Err(_) => {
            let message = format!("the request body did not arrive within {timeout:?}");
            return (http::StatusCode::REQUEST_TIMEOUT, message).into_response();
        }
    };
    let json = is_json(&parts.headers);
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes.clone())))
        .await;
    // rmcp answers 415 both for a wrong Content-Type and for a JSON body it
    // cannot read as a message; only the second is a JSON-RPC error.
    if json && response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return not_a_message(&bytes);
    }
    response
}

/// The whole body, or the answer that refuses it.
async fn collect(body: Body, limit: usize) -> Result<Bytes, Response> {
    let mut stream = body.into_data_stream();
    // A body usually comes in one chunk, handed on without a copy.
    let mut first = Bytes::new();
    let mut joined = Vec::new();
    let mut length = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| {
            let message = "the request body could not be read";
            (http::StatusCode::BAD_REQUEST, message).into_response()
        })?;
        length += chunk.len();
        if length > limit {
            return Err(super::http_server::too_large(limit));
        }
        if first.is_empty() && joined.is_empty() {
            first = chunk;
        } else {
            if joined.is_empty() {
                joined.extend_from_slice(&first);
            }
            joined.extend_from_slice(&chunk);
        }
    }
    Ok(if joined.is_empty() {
        first
    } else {
        Bytes::from(joined)
    })
}

/// Whether the request says its body is JSON.
fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The JSON-RPC error for a body rmcp could not read as a message.
fn not_a_message(body: &[u8]) -> Response {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(error) => {
            let message = format!("Parse error: {error}");
            return jsonrpc_error(
                http::StatusCode::BAD_REQUEST,
                Value::Null,
                PARSE_ERROR,
                &message,
            );
        }
    };
    let (id, why) = match &value {
        Value::Array(_) => (Value::Null, "batches are not supported"),
        Value::Object(object) => {
            // The id, when it is one a response may carry.
            let id = object
                .get("id")
                .filter(|id| id.is_string() || id.is_number())
                .cloned()
                .unwrap_or(Value::Null);
            (id, "not a JSON-RPC 2.0 request, notification or response")
        }
        _ => (Value::Null, "a JSON-RPC message is an object"),
    };
    let message = format!("Invalid Request: {why}");
    jsonrpc_error(http::StatusCode::BAD_REQUEST, id, INVALID_REQUEST, &message)
}

/// A JSON-RPC error response with `status`; `message` is cut to a short
/// prefix, since it may quote what the client sent.
pub(super) fn jsonrpc_error(
    status: http::StatusCode,
    id: Value,
    code: i64,
    message: &str,
) -> Response {
    let id = match id {
        // An id of any length is the client's: quoted only when short.
        Value::String(s) if s.len() > 256 => Value::Null,
        id => id,
    };
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": Excerpt::message(message).to_string()},
    });
    let content_type = [(http::header::CONTENT_TYPE, "application/json")];
    (status, content_type, body.to_string()).into_response()
}

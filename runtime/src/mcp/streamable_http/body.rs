//! A request's body, read whole within its time and size limits before
//! rmcp sees it, and the JSON-RPC answers for bodies that are no message.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use rmcp::model::{ClientJsonRpcMessage, ErrorData};

use crate::mcp::jsonrpc::{Reply, Unreadable, unreadable};

/// Reads a POST's body within `timeout` and `limit`, then hands it to
/// `next`.
///
/// A slow body cannot hold the request past `timeout` (408), one over
/// `limit` is refused as it arrives (413), and a body that is not a
/// JSON-RPC message gets 400 with the JSON-RPC error that says why, where
/// rmcp would answer 415 with serde's text.
pub(super) async fn read_body<F: Future<Output = Response>>(
    timeout: Duration,
    limit: usize,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    if request.method() != http::Method::POST {
        return next(request).await;
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
    let response = next(Request::from_parts(parts, Body::from(bytes.clone()))).await;
    // rmcp answers 415 both for a wrong Content-Type and for a JSON body it
    // cannot read as a message; only the second is a JSON-RPC error.
    if json && response.status() == http::StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return not_a_message(&bytes, response);
    }
    response
}

/// The whole body, or the answer that refuses it.
pub(super) async fn collect(body: Body, limit: usize) -> Result<Bytes, Response> {
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
            return Err(too_large(limit));
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

/// The answer to a request that declares a body over `limit` bytes (413,
/// before any of it is read), or `None`.
pub(super) fn declared_over(headers: &http::HeaderMap, limit: usize) -> Option<Response> {
    declared_length(headers)
        .is_some_and(|length| length > limit as u64)
        .then(|| too_large(limit))
}

/// The body length a request declares, if it declares one that parses.
fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The answer to a request whose declared body is over `limit` bytes.
fn too_large(limit: usize) -> Response {
    let message = format!("the request body is over the limit of {limit} bytes");
    (http::StatusCode::PAYLOAD_TOO_LARGE, message).into_response()
}

/// Whether the request says its body is JSON.
pub(super) fn is_json(headers: &http::HeaderMap) -> bool {
    headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The answer to a body rmcp could not read as a message: 400, with the
/// JSON-RPC error the stdio transport gives the same text.
fn not_a_message(body: &[u8], rmcp: Response) -> Response {
    let Err(error) = serde_json::from_slice::<ClientJsonRpcMessage>(body) else {
        // A message after all: rmcp refused it for another reason.
        return rmcp;
    };
    let reply = match unreadable(body, &error) {
        Unreadable::Answer(reply) => reply,
        // Over HTTP every request is answered.
        Unreadable::Unanswered => Reply::new(
            None,
            ErrorData::invalid_request("Invalid request: not a JSON-RPC 2.0 message", None),
        ),
    };
    jsonrpc_error(http::StatusCode::BAD_REQUEST, &reply)
}

/// `reply` as the answer to an HTTP request, with `status`.
pub(super) fn jsonrpc_error(status: http::StatusCode, reply: &Reply) -> Response {
    let body = serde_json::to_string(reply).unwrap_or_default();
    let content_type = [(http::header::CONTENT_TYPE, "application/json")];
    (status, content_type, body).into_response()
}

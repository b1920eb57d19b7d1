//! What every endpoint shares: JSON answers and errors, reading a bounded
//! JSON body, and the headers every response carries.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{
    CACHE_CONTROL, CONTENT_LENGTH, CONTENT_SECURITY_POLICY, CONTENT_TYPE, ETAG, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use http::{HeaderMap, HeaderValue, StatusCode};
use http_body_util::{BodyExt as _, LengthLimitError, Limited};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// An error answer: a status and `{"error": "<text>"}`.
#[derive(Debug)]
pub(crate) struct Failure {
    status: StatusCode,
    text: String,
}

impl Failure {
    pub(crate) fn new(status: StatusCode, text: impl Into<String>) -> Self {
        Failure {
            status,
            text: text.into(),
        }
    }

    pub(crate) fn not_found(text: impl Into<String>) -> Self {
        Failure::new(StatusCode::NOT_FOUND, text)
    }

    pub(crate) fn bad_request(text: impl Into<String>) -> Self {
        Failure::new(StatusCode::BAD_REQUEST, text)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.text });
        let mut response = json_body(&body);
        *response.status_mut() = self.status;
        response
    }
}

/// A page's place and size from the query: the number `cursor` names
/// (0 without it) and `limit` (`default` without it, at most `max`); 400
/// when one is not a whole number, or `limit` is 0.
pub(crate) fn paging(
    uri: &http::Uri,
    cursor: &str,
    default: usize,
    max: usize,
) -> Result<(u64, usize), Failure> {
    let (mut at, mut limit) = (0, default);
    for pair in uri.query().unwrap_or_default().split('&') {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let number = || {
            value.parse::<u64>().map_err(|_| {
                Failure::bad_request(format!("`{name}` must be a whole number, not `{value}`"))
            })
        };
        if name == cursor {
            at = number()?;
        } else if name == "limit" {
            let asked = number()?;
            if asked == 0 {
                return Err(Failure::bad_request("`limit` must be at least 1"));
            }
            limit = usize::try_from(asked).unwrap_or(max).min(max);
        }
    }
    Ok((at, limit))
}

/// `value` as a 200 JSON answer, with `etag` if given.
pub(crate) fn json(value: &impl Serialize, etag: Option<&str>) -> Response {
    let mut response = json_body(value);
    if let Some(etag) = etag.and_then(|e| HeaderValue::from_str(e).ok()) {
        response.headers_mut().insert(ETAG, etag);
    }
    response
}

fn json_body(value: &impl Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            response
        }
        // Our own types always serialize; a map with non-string keys
        // from an application's schema would not.
        Err(error) => {
            tracing::error!(%error, "an admin answer could not be serialized");
            let mut response = Response::new(Body::from(
                r#"{"error":"the answer could not be serialized"}"#,
            ));
            *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
            response.headers_mut().insert(
                CONTENT_TYPE,
                HeaderValue::from_static("application/json; charset=utf-8"),
            );
            response
        }
    }
}

/// A 304 for a GET whose `If-None-Match` names the current `etag`.
pub(crate) fn not_modified(etag: &str) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    if let Ok(etag) = HeaderValue::from_str(etag) {
        response.headers_mut().insert(ETAG, etag);
    }
    response
}

/// The request body as `T`, read up to `limit` bytes: 413 past it, 400
/// when it is not JSON of the right shape. An empty body reads as `{}`.
pub(crate) async fn read_json<T: DeserializeOwned>(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
) -> Result<T, Failure> {
    let too_large = || {
        Failure::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than {limit} bytes"),
        )
    };
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let bytes: Bytes = match Limited::new(body, limit).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<LengthLimitError>() => return Err(too_large()),
        Err(error) => {
            return Err(Failure::bad_request(format!(
                "the request body could not be read: {error}"
            )));
        }
    };
    let bytes: &[u8] = if bytes.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        &bytes
    };
    serde_json::from_slice(bytes)
        .map_err(|error| Failure::bad_request(format!("the request body is not valid: {error}")))
}

/// 404 for what the admin does not serve.
pub(crate) async fn not_found() -> Failure {
    Failure::not_found("no such admin resource")
}

/// The headers every answer carries: never sniffed, framed, cached or
/// referred; API answers run no content at all.
pub(crate) async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    if !headers.contains_key(CONTENT_SECURITY_POLICY) {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"),
        );
    }
    if !headers.contains_key(CACHE_CONTROL) {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

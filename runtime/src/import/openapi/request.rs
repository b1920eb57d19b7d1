//! A call of an imported operation: its arguments as an HTTP request,
//! and the answer as the call's result.

use std::fmt;

use reqwest::header::{CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Client, Url};
use serde_json::Value;

use super::document::{BODY, In, Route, is_json};
use crate::error::BoxError;

/// The most characters of a failed answer's body a tool error carries.
const ERROR_BODY_CHARS: usize = 1_000;

/// What every call of one service shares: its client, its base URL, the
/// credentials the application gave, and the largest answer read.
pub(super) struct Caller {
    pub(super) client: Client,
    pub(super) base: Url,
    pub(super) credentials: Credentials,
    pub(super) max_response: usize,
}

/// Headers and query parameters the application adds to every request.
/// Their values are never shown: not in `Debug`, not in an error.
#[derive(Clone, Default)]
pub(super) struct Credentials {
    pub(super) headers: Vec<(HeaderName, HeaderValue)>,
    pub(super) query: Vec<(String, String)>,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        let query: Vec<&str> = self.query.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Credentials")
            .field("headers", &headers)
            .field("query", &query)
            .finish_non_exhaustive()
    }
}

impl Caller {
    /// Sends `route` with `arguments` (validated against its input
    /// schema) and reads the answer: a 2xx answer is the result (JSON as
    /// a value, text as a string); any other is a tool error with its
    /// status and the start of its body.
    pub(super) async fn call(&self, route: &Route, arguments: Value) -> Result<Value, BoxError> {
        let Value::Object(mut arguments) = arguments else {
            return Err("the arguments are not an object".into());
        };
        let mut url = self.url(route, &arguments)?;
        {
            let mut query = url.query_pairs_mut();
            for param in route.params.iter().filter(|p| p.at == In::Query) {
                let Some(value) = arguments.get(&param.name) else {
                    continue;
                };
                match value {
                    Value::Array(items) if param.explode => {
                        for item in items {
                            query.append_pair(&param.name, &scalar(&param.name, item)?);
                        }
                    }
                    Value::Null => {}
                    value => _ = query.append_pair(&param.name, &text(&param.name, value)?),
                }
            }
            for (name, value) in &self.credentials.query {
                query.append_pair(name, value);
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
        let mut request = self.client.request(route.method.clone(), url);
        for param in route.params.iter().filter(|p| p.at == In::Header) {
            match arguments.get(&param.name) {
                None | Some(Value::Null) => {}
                Some(value) => {
                    let value = HeaderValue::try_from(text(&param.name, value)?)
                        .map_err(|_| format!("`{}` is not a valid header value", param.name))?;
                    request = request.header(&param.name, value);
                }
            }
        }
        for (name, value) in &self.credentials.headers {
            request = request.header(name, value.clone());
        }
        if let Some(media_type) = &route.body
            && let Some(body) = arguments.remove(BODY)
        {
            request = request
                .header(CONTENT_TYPE, media_type)
                .body(serde_json::to_vec(&body)?);
        }
        // Without the URL, which may carry a credential in its query.
        let mut response = request.send().await.map_err(reqwest::Error::without_url)?;
        let status = response.status();
        let media_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(reqwest::Error::without_url)?
        {
            if body.len() + chunk.len() > self.max_response {
                return Err(format!(
                    "the answer ({status}) is longer than {} bytes, the import's `max_response`",
                    self.max_response
                )
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let text = String::from_utf8_lossy(&body);
            let mut cut: String = text.chars().take(ERROR_BODY_CHARS).collect();
            if cut.len() < text.len() {
                cut.push_str(" […]");
            }
            return Err(match cut.trim() {
                "" => format!("the service answered {status}"),
                said => format!("the service answered {status}: {said}"),
            }
            .into());
        }
        answer(status, media_type.as_deref(), body)
    }

    /// The base URL with the route's path, its parameters filled in (each
    /// one percent-encoded as one path segment).
    fn url(
        &self,
        route: &Route,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<Url, BoxError> {
        let mut url = self.base.clone();
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|()| "the base URL cannot have a path")?;
            segments.pop_if_empty();
            for template in route.path.split('/').filter(|s| !s.is_empty()) {
                let mut segment = template.to_owned();
                for param in route.params.iter().filter(|p| p.at == In::Path) {
                    let hole = format!("{{{}}}", param.name);
                    if segment.contains(&hole) {
                        let value = arguments.get(&param.name).ok_or_else(|| {
                            format!("the path parameter `{}` is missing", param.name)
                        })?;
                        segment = segment.replace(&hole, &text(&param.name, value)?);
                    }
                }
                segments.push(&segment);
            }
        }
        Ok(url)
    }
}

/// A 2xx answer as the call's result: its JSON, its text, or a line
/// saying what it was when it is neither.
fn answer(
    status: reqwest::StatusCode,
    media_type: Option<&str>,
    body: Vec<u8>,
) -> Result<Value, BoxError> {
    if body.is_empty() {
        return Ok(Value::String(status.to_string()));
    }
    match media_type {
        Some(media_type) if is_json(media_type) => serde_json::from_slice(&body).map_err(|e| {
            format!("the service answered {status} with `{media_type}` that is not JSON: {e}")
                .into()
        }),
        Some(media_type) if !media_type.starts_with("text/") => Ok(Value::String(format!(
            "{status}: {} bytes of `{media_type}`, not shown",
            body.len()
        ))),
        _ => match String::from_utf8(body) {
            Ok(text) => Ok(Value::String(text)),
            Err(e) => Ok(Value::String(format!(
                "{status}: {} bytes that are not UTF-8 text, not shown",
                e.as_bytes().len()
            ))),
        },
    }
}

/// A parameter's value as text: an array's items joined by commas (the
/// `simple` and unexploded `form` styles).
fn text(name: &str, value: &Value) -> Result<String, BoxError> {
    match value {
        Value::Array(items) => Ok(items
            .iter()
            .map(|item| scalar(name, item))
            .collect::<Result<Vec<_>, _>>()?
            .join(",")),
        value => scalar(name, value),
    }
}

/// A string, number or boolean as its text.
fn scalar(name: &str, value: &Value) -> Result<String, BoxError> {
    match value {
        Value::String(text) => Ok(text.clone()),
        Value::Number(number) => Ok(number.to_string()),
        Value::Bool(flag) => Ok(flag.to_string()),
        Value::Null => Ok(String::new()),
        _ => Err(format!(
            "`{name}` holds an object or a nested list, which this import does not send"
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{answer, text};

    #[test]
    fn parameter_values_are_sent_as_text() {
        assert_eq!(text("a", &json!("x y")).unwrap(), "x y");
        assert_eq!(text("a", &json!(3)).unwrap(), "3");
        assert_eq!(text("a", &json!([1, true, "z"])).unwrap(), "1,true,z");
        assert!(text("a", &json!({"k": 1})).is_err());
    }

    #[test]
    fn answers_become_values_by_media_type() {
        let ok = reqwest::StatusCode::OK;
        let json = answer(ok, Some("application/json"), br#"{"id": 1}"#.to_vec());
        assert_eq!(json.unwrap(), json!({"id": 1}));
        let text = answer(ok, Some("text/plain; charset=utf-8"), b"hello".to_vec());
        assert_eq!(text.unwrap(), json!("hello"));
        let png = answer(ok, Some("image/png"), vec![0x89, 0x50]);
        assert_eq!(
            png.unwrap(),
            json!("200 OK: 2 bytes of `image/png`, not shown")
        );
        let empty = answer(reqwest::StatusCode::NO_CONTENT, None, Vec::new());
        assert_eq!(empty.unwrap(), json!("204 No Content"));
        assert!(answer(ok, Some("application/json"), b"{".to_vec()).is_err());
    }
}

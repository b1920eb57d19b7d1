//! Who may use the admin API: bearer tokens compared in constant time, and
//! requests from foreign pages refused by their `Host` and `Origin`.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::header::{AUTHORIZATION, HOST, ORIGIN, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq as _;

use super::api::Failure;
use super::{Operator, Shared};
use crate::web::credentials::bearer;

/// The operators by the SHA-256 digest of their token.
#[derive(Clone, Default)]
pub(crate) struct Operators {
    by_digest: Vec<([u8; 32], Arc<Operator>)>,
}

impl Operators {
    pub(crate) fn add(&mut self, token: &[u8], operator: Operator) {
        if token.is_empty() {
            tracing::warn!(operator = %operator.id, "an empty admin token lets nobody in; ignored");
            return;
        }
        let digest = digest(token);
        self.by_digest.retain(|(known, _)| *known != digest);
        self.by_digest.push((digest, Arc::new(operator)));
    }

    pub(crate) fn len(&self) -> usize {
        self.by_digest.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }

    /// The operator holding `token`. Every known token is compared, each
    /// in constant time, so the time taken says nothing about which one
    /// (if any) matched, nor how much of one did.
    fn find(&self, token: &[u8]) -> Option<Arc<Operator>> {
        let digest = digest(token);
        let mut found = None;
        for (known, operator) in &self.by_digest {
            // Comparing digests, not the tokens, also hides the tokens' lengths.
            if bool::from(known.ct_eq(&digest)) {
                found = Some(operator.clone());
            }
        }
        found
    }
}

fn digest(token: &[u8]) -> [u8; 32] {
    Sha256::digest(token).into()
}

/// Lets a request with an operator's token through, as that operator
/// (an `Arc<Operator>` extension); 401 otherwise.
pub(crate) async fn authenticate(
    State(shared): State<Arc<Shared>>,
    mut request: Request,
    next: Next,
) -> Response {
    let token = bearer(request.headers()).map(str::as_bytes);
    let Some(operator) = token.and_then(|t| shared.operators.find(t)) else {
        let text = if request.headers().contains_key(AUTHORIZATION) {
            "the token is not an admin token"
        } else {
            "an admin token is required: send `Authorization: Bearer <token>`"
        };
        let mut response = Failure::new(StatusCode::UNAUTHORIZED, text).into_response();
        response
            .headers_mut()
            .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return response;
    };
    request.extensions_mut().insert(operator);
    next.run(request).await
}

/// Refuses a request for a `Host` the admin does not answer to (403; 400
/// without one): the admin's own origin is read from `Host`, so it must be
/// one of the admin's names before [`check_origin`] can trust it.
pub(crate) async fn check_host(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    match shared.allowed_hosts.check(request.uri(), request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => Failure::new(refusal.status(), refusal.message()).into_response(),
    }
}

/// Refuses (403) a request whose `Origin` is neither the admin's own (the
/// `Host` it was sent to) nor one allowed. Requests with no `Origin`
/// (non-browser clients, page navigations) pass.
pub(crate) async fn check_origin(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(origin) = request.headers().get(ORIGIN) else {
        return next.run(request).await;
    };
    let origin = origin.to_str().ok().and_then(Origin::parse);
    let admitted = origin.is_some_and(|origin| {
        let host = request
            .headers()
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| request.uri().authority().map(|a| a.as_str()));
        host.is_some_and(|host| origin.is_host(host)) || shared.allowed_origins.contains(&origin)
    });
    if !admitted {
        return Failure::new(
            StatusCode::FORBIDDEN,
            "requests from this origin are not allowed",
        )
        .into_response();
    }
    next.run(request).await
}

/// A web origin: scheme, host and port (the scheme's default when absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    scheme: String,
    host: String,
    port: u16,
}

impl Origin {
    /// `scheme://host[:port]` (an `Origin` header's form), http or https;
    /// `None` for anything else, `null` included.
    pub(crate) fn parse(text: &str) -> Option<Origin> {
        let uri = http::Uri::try_from(text.trim()).ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() {
            return None;
        }
        let authority = uri.authority()?;
        if authority.as_str().contains('@') {
            return None;
        }
        Some(Origin {
            scheme,
            host: authority.host().to_ascii_lowercase(),
            port: authority.port_u16().unwrap_or(default_port),
        })
    }

    /// Whether this origin is the one a request to `host` (a `Host`
    /// header: `host[:port]`) comes from when its page was served there.
    fn is_host(&self, host: &str) -> bool {
        let Ok(authority) = host.parse::<http::uri::Authority>() else {
            return false;
        };
        let default_port = if self.scheme == "https" { 443 } else { 80 };
        authority.host().eq_ignore_ascii_case(&self.host)
            && authority.port_u16().unwrap_or(default_port) == self.port
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_match_their_own_host_only() {
        let origin = Origin::parse("http://127.0.0.1:8001").unwrap();
        assert!(origin.is_host("127.0.0.1:8001"));
        assert!(!origin.is_host("127.0.0.1:8002"));
        assert!(!origin.is_host("localhost:8001"));
        let https = Origin::parse("https://Admin.Example.com").unwrap();
        assert!(https.is_host("admin.example.com"));
        assert!(https.is_host("admin.example.com:443"));
        assert!(!https.is_host("admin.example.com:80"));
        assert_eq!(Origin::parse("null"), None);
        assert_eq!(Origin::parse("file:///etc"), None);
        assert_eq!(Origin::parse("http://a.example/path"), None);
    }

    #[test]
    fn tokens_are_found_by_digest_and_empty_ones_never() {
        let mut operators = Operators::default();
        operators.add(b"", Operator::new("nobody"));
        operators.add(b"secret-token", Operator::new("ops"));
        assert_eq!(operators.len(), 1);
        assert_eq!(operators.find(b"secret-token").unwrap().id, "ops");
        assert!(operators.find(b"secret-tokem").is_none());
        assert!(operators.find(b"").is_none());
    }
}

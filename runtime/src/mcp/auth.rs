//! Who is calling over HTTP: the [`Authenticate`] trait, anonymous access,
//! refusals with their `WWW-Authenticate` challenge, and the
//! protected-resource metadata (RFC 9728) a protected server serves.

use std::future::Future;

use serde::Serialize;

/// Turns an HTTP request's parts (headers such as `Authorization`) into
/// the caller's context, or refuses the request before any MCP processing.
///
/// Implemented for every `Fn(&Parts) -> Result<C, Rejection>` closure, for
/// [`allow_anonymous`], and for the JWT validator
/// `JwtAuth` (feature `oauth`). Implement it on
/// your own type to check credentials that need to wait, such as opaque
/// tokens looked up in a database:
///
/// ```
/// use toolwright::mcp::{Authenticate, Rejection, bearer_token};
/// use toolwright::mcp::http::request::Parts;
///
/// #[derive(Clone)]
/// struct Tokens; // a database pool, say
///
/// impl Tokens {
///     async fn owner_of(&self, token: &str) -> Option<String> {
///         (token == "s3cret").then(|| "alice".to_owned())
///     }
/// }
///
/// impl Authenticate<String> for Tokens {
///     async fn authenticate(&self, parts: &Parts) -> Result<String, Rejection> {
///         let token = bearer_token(&parts.headers).ok_or_else(Rejection::unauthorized)?;
///         self.owner_of(token)
///             .await
///             .ok_or_else(|| Rejection::invalid_token("unknown or revoked token"))
///     }
/// }
/// ```
pub trait Authenticate<C>: Clone + Send + Sync + 'static {
    /// The caller's context for this request, or why it is refused.
    fn authenticate(
        &self,
        parts: &http::request::Parts,
    ) -> impl Future<Output = Result<C, Rejection>> + Send;

    /// The protected-resource metadata the endpoint serves at
    /// `/.well-known/oauth-protected-resource` and names in the
    /// `WWW-Authenticate` header of every 401, so that an OAuth client
    /// (MCP Inspector, say) knows where to get a token. Default: none.
    fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        None
    }

    /// Whether every request is let in without credentials
    /// ([`allow_anonymous`]): serving such an endpoint on an address other
    /// than loopback logs a warning.
    fn is_anonymous(&self) -> bool {
        false
    }
}

impl<C, F> Authenticate<C> for F
where
    F: Fn(&http::request::Parts) -> Result<C, Rejection> + Clone + Send + Sync + 'static,
    C: Send,
{
    fn authenticate(
        &self,
        parts: &http::request::Parts,
    ) -> impl Future<Output = Result<C, Rejection>> + Send {
        std::future::ready(self(parts))
    }
}

/// Lets every request in as `ctx`, with no credentials: for local
/// development, and for test suites such as the MCP conformance suite
/// that cannot send a token. [`McpServer::serve_http`](crate::mcp::McpServer::serve_http)
/// logs a warning when it serves one on an address other than loopback.
///
/// ```
/// use toolwright::mcp::{allow_anonymous, Authenticate};
///
/// let anyone = allow_anonymous("guest".to_owned());
/// assert!(anyone.is_anonymous());
/// ```
pub fn allow_anonymous<C: Clone + Send + Sync + 'static>(ctx: C) -> Anonymous<C> {
    Anonymous { ctx }
}

/// Every request gets the same context: see [`allow_anonymous`].
#[derive(Debug, Clone)]
pub struct Anonymous<C> {
    ctx: C,
}

impl<C: Clone + Send + Sync + 'static> Authenticate<C> for Anonymous<C> {
    fn authenticate(
        &self,
        _: &http::request::Parts,
    ) -> impl Future<Output = Result<C, Rejection>> + Send {
        std::future::ready(Ok(self.ctx.clone()))
    }

    fn is_anonymous(&self) -> bool {
        true
    }
}

/// What a protected MCP endpoint tells OAuth clients about itself
/// (OAuth 2.0 Protected Resource Metadata, RFC 9728), as MCP's
/// authorization rules ask: which authorization servers issue its tokens,
/// and which scopes it knows.
///
/// ```
/// use toolwright::mcp::ResourceMetadata;
///
/// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"])
///     .scopes(["tools:read", "tools:write"]);
/// // Where a client finds it: the well-known path, inserted before the resource's path.
/// assert_eq!(
///     metadata.url(),
///     "https://tools.example.com/.well-known/oauth-protected-resource/mcp"
/// );
/// let json = serde_json::to_value(&metadata).unwrap();
/// assert_eq!(json["authorization_servers"][0], "https://login.example.com");
/// assert_eq!(json["bearer_methods_supported"][0], "header");
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ResourceMetadata {
    /// The endpoint's own URL, as clients reach it (`https://host/mcp`): the
    /// audience its tokens are issued for.
    pub resource: String,
    /// The issuers of its tokens.
    pub authorization_servers: Vec<String>,
    /// The scopes its tools ask for (empty: not advertised).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scopes_supported: Vec<String>,
    /// How a token is sent: only in the `Authorization` header.
    pub bearer_methods_supported: Vec<String>,
    /// A name for people.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
}

/// The well-known path of protected-resource metadata (RFC 9728, 3).
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl ResourceMetadata {
    /// The metadata of the endpoint at `resource`, whose tokens come from
    /// `authorization_servers`.
    pub fn new(
        resource: impl Into<String>,
        authorization_servers: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        ResourceMetadata {
            resource: resource.into(),
            authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
            scopes_supported: Vec::new(),
            bearer_methods_supported: vec!["header".to_owned()],
            resource_name: None,
        }
    }

    /// Advertises the scopes the endpoint's tools ask for.
    pub fn scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// A name for people.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Where the metadata is served: the well-known path inserted between
    /// the resource's host and its path (RFC 9728, 3.1).
    pub fn url(&self) -> String {
        let (origin, path) = split_url(&self.resource);
        format!("{origin}{WELL_KNOWN}{path}")
    }

    /// The resource's path (`/mcp`), or empty for a resource at the root.
    pub(crate) fn path(&self) -> &str {
        split_url(&self.resource).1
    }
}

/// `scheme://authority` and the path of an absolute URL, without its
/// query; the path is empty for `/` or none.
fn split_url(url: &str) -> (&str, &str) {
    let url = url.split(['?', '#']).next().unwrap_or(url);
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(slash) => {
            let (origin, path) = url.split_at(after_scheme + slash);
            (origin, path.trim_end_matches('/'))
        }
        None => (url, ""),
    }
}

/// Why an HTTP request was refused before any MCP processing.
///
/// A 401 carries a `WWW-Authenticate: Bearer` challenge, naming the
/// endpoint's [`ResourceMetadata`] when it has some, and for a token that
/// was sent but refused, `error="invalid_token"` (RFC 6750, 3.1).
///
/// ```
/// use toolwright::mcp::Rejection;
/// assert_eq!(Rejection::unauthorized().status(), http::StatusCode::UNAUTHORIZED);
/// assert_eq!(Rejection::invalid_token("expired").status(), http::StatusCode::UNAUTHORIZED);
/// assert_eq!(Rejection::forbidden().status(), http::StatusCode::FORBIDDEN);
/// assert_eq!(Rejection::insufficient_scope("tools:write").status(), http::StatusCode::FORBIDDEN);
/// ```
#[derive(Debug, Clone)]
pub struct Rejection {
    status: http::StatusCode,
    message: String,
    /// The `error` of the Bearer challenge (RFC 6750, 3.1), if any.
    error: Option<&'static str>,
    /// The scope an `insufficient_scope` refusal asks for.
    scope: Option<String>,
}

impl Rejection {
    /// 401, with `WWW-Authenticate: Bearer`: no credentials.
    pub fn unauthorized() -> Self {
        Rejection::new(http::StatusCode::UNAUTHORIZED, "Unauthorized")
    }

    /// 401 with `error="invalid_token"`: a token that is malformed,
    /// expired, revoked or not for this server. `why` is sent to the
    /// client as the challenge's description; keep secrets out of it.
    pub fn invalid_token(why: impl Into<String>) -> Self {
        Rejection {
            error: Some("invalid_token"),
            ..Rejection::new(http::StatusCode::UNAUTHORIZED, why)
        }
    }

    /// 403: valid credentials that may not use this server.
    pub fn forbidden() -> Self {
        Rejection::new(http::StatusCode::FORBIDDEN, "Forbidden")
    }

    /// 403 with `error="insufficient_scope"`: a valid token without
    /// `scope`, which the client may ask the authorization server for.
    pub fn insufficient_scope(scope: impl Into<String>) -> Self {
        let scope = scope.into();
        Rejection {
            error: Some("insufficient_scope"),
            message: format!("the token lacks the scope `{scope}`"),
            scope: Some(scope),
            ..Rejection::forbidden()
        }
    }

    /// Another status, with a message for the client.
    pub fn new(status: http::StatusCode, message: impl Into<String>) -> Self {
        Rejection {
            status,
            message: message.into(),
            error: None,
            scope: None,
        }
    }

    /// The HTTP status the request gets.
    pub fn status(&self) -> http::StatusCode {
        self.status
    }

    /// The answer, with a Bearer challenge naming `metadata` (its URL).
    pub(crate) fn into_response(self, metadata: Option<&str>) -> axum::response::Response {
        let challenged = self.status == http::StatusCode::UNAUTHORIZED || self.error.is_some();
        let mut challenge = String::from("Bearer");
        let mut params = Vec::new();
        if let Some(url) = metadata {
            params.push(format!("resource_metadata=\"{}\"", quotable(url)));
        }
        if let Some(error) = self.error {
            params.push(format!("error=\"{error}\""));
            params.push(format!("error_description=\"{}\"", quotable(&self.message)));
        }
        if let Some(scope) = &self.scope {
            params.push(format!("scope=\"{}\"", quotable(scope)));
        }
        if !params.is_empty() {
            challenge.push(' ');
            challenge.push_str(&params.join(", "));
        }
        let mut response = axum::response::IntoResponse::into_response((self.status, self.message));
        if challenged && let Ok(value) = http::HeaderValue::from_str(&challenge) {
            response
                .headers_mut()
                .insert(http::header::WWW_AUTHENTICATE, value);
        }
        response
    }
}

/// `text` as the inside of a quoted string in a header: printable ASCII
/// without quotes or backslashes, at most 200 characters.
fn quotable(text: &str) -> String {
    text.chars()
        .filter(|c| (' '..='~').contains(c) && *c != '"' && *c != '\\')
        .take(200)
        .collect()
}

/// The token of an `Authorization: Bearer <token>` header, or `None`
/// without one. The scheme is matched in any case (`bearer`, `BEARER`):
/// HTTP authentication schemes are case-insensitive (RFC 9110, 11.1).
///
/// For an `authenticate` function of [`McpServer::http_router`](crate::mcp::McpServer::http_router):
///
/// ```
/// use toolwright::mcp::bearer_token;
/// use toolwright::mcp::http::{HeaderMap, HeaderValue, header::AUTHORIZATION};
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(bearer_token(&headers), None);
/// for value in ["Bearer demo", "bearer demo", "BEARER  demo"] {
///     headers.insert(AUTHORIZATION, HeaderValue::from_static(value));
///     assert_eq!(bearer_token(&headers), Some("demo"));
/// }
/// headers.insert(AUTHORIZATION, HeaderValue::from_static("Basic ZGVtbzpkZW1v"));
/// assert_eq!(bearer_token(&headers), None);
/// headers.insert(AUTHORIZATION, HeaderValue::from_static("Bearer "));
/// assert_eq!(bearer_token(&headers), None);
/// ```
pub fn bearer_token(headers: &http::HeaderMap) -> Option<&str> {
    crate::web::credentials::bearer(headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_urls_insert_the_well_known_path_before_the_resource_path() {
        let at = |resource: &str| ResourceMetadata::new(resource, ["https://as"]).url();
        assert_eq!(
            at("https://h:8443/api/mcp/"),
            "https://h:8443/.well-known/oauth-protected-resource/api/mcp"
        );
        assert_eq!(
            at("https://h"),
            "https://h/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            at("http://127.0.0.1:8000/mcp?x=1"),
            "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn challenges_name_the_metadata_and_the_error() {
        let header = |rejection: Rejection, metadata| {
            rejection
                .into_response(metadata)
                .headers()
                .get(http::header::WWW_AUTHENTICATE)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        assert_eq!(header(Rejection::unauthorized(), None).unwrap(), "Bearer");
        assert_eq!(
            header(
                Rejection::invalid_token("it \"expired\""),
                Some("https://h/m")
            )
            .unwrap(),
            "Bearer resource_metadata=\"https://h/m\", error=\"invalid_token\", \
             error_description=\"it expired\""
        );
        assert!(
            header(Rejection::insufficient_scope("tools:write"), None)
                .unwrap()
                .contains("scope=\"tools:write\"")
        );
        assert_eq!(header(Rejection::forbidden(), None), None);
    }
}

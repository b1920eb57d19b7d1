//! The Streamable HTTP endpoint: authentication, limits and the router.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::{McpHandler, McpServer, ServeError};

impl<C: Any + Send + Sync> McpServer<C> {
    /// A Streamable HTTP endpoint at `/mcp`, to mount in the application's
    /// own axum router.
    ///
    /// `authenticate` turns each request's HTTP parts (headers such as a
    /// bearer token) into the caller's context; a [`Rejection`] answers the
    /// request before any MCP processing. The `Origin` header is checked
    /// against `options.allowed_origins` (DNS-rebinding protection) and
    /// bodies over `options.max_body_bytes` are refused: with 413 before
    /// anything is read when the request's `Content-Length` says so.
    pub fn http_router<A>(&self, authenticate: A, options: HttpOptions) -> axum::Router
    where
        A: Fn(&http::request::Parts) -> Result<C, Rejection> + Clone + Send + Sync + 'static,
    {
        let max_body_bytes = options.max_body_bytes;
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes);
        config = if options.allowed_hosts.is_empty() {
            config.disable_allowed_hosts()
        } else {
            config.with_allowed_hosts(options.allowed_hosts.clone())
        };
        config.legacy_session_mode = !options.stateless;
        config.json_response = options.json_response;

        let handler = McpHandler {
            shared: self.shared.clone(),
            context: None,
            sessions: !options.stateless,
        };
        let factory = move || Ok(handler.clone());
        let endpoint = if options.stateless {
            let service = StreamableHttpService::new(
                factory,
                Arc::new(NeverSessionManager::default()),
                config,
            );
            axum::Router::new().nest_service("/mcp", service)
        } else {
            let service = StreamableHttpService::new(
                factory,
                Arc::new(LocalSessionManager::default()),
                config,
            );
            axum::Router::new().nest_service("/mcp", service)
        };
        endpoint
            .layer(axum::middleware::from_fn(
                move |mut request: axum::extract::Request, next: axum::middleware::Next| {
                    let authenticate = authenticate.clone();
                    async move {
                        let (mut parts, body) = request.into_parts();
                        match authenticate(&parts) {
                            Ok(ctx) => {
                                parts.extensions.insert(CallerContext(Arc::new(ctx)));
                                request = axum::extract::Request::from_parts(parts, body);
                                next.run(request).await
                            }
                            Err(rejection) => rejection.into_response(),
                        }
                    }
                },
            ))
            // Outermost: a body declared too large is refused before anything
            // waits for it (or for credentials).
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| async move {
                    if declared_length(request.headers()).is_some_and(|n| n > max_body_bytes as u64)
                    {
                        return too_large(max_body_bytes);
                    }
                    next.run(request).await
                },
            ))
    }

    /// Binds `addr` and serves [`McpServer::http_router`] until the process
    /// ends. Use [`DEFAULT_HTTP_ADDR`] (loopback) unless the server must be
    /// reachable from other machines.
    pub async fn serve_http<A>(
        self,
        addr: SocketAddr,
        authenticate: A,
        options: HttpOptions,
    ) -> Result<(), ServeError>
    where
        A: Fn(&http::request::Parts) -> Result<C, Rejection> + Clone + Send + Sync + 'static,
    {
        let router = self.http_router(authenticate, options);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| ServeError::new(format!("cannot bind {addr}"), e))?;
        axum::serve(listener, router)
            .await
            .map_err(|e| ServeError::new("serving HTTP failed", e))
    }
}

/// Where [`McpServer::serve_http`] listens by default: loopback only.
///
/// ```
/// assert!(toolwright::mcp::DEFAULT_HTTP_ADDR.ip().is_loopback());
/// ```
pub const DEFAULT_HTTP_ADDR: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8000);

/// The caller's context for one HTTP request, put there by authentication.
pub(super) struct CallerContext<C>(pub(super) Arc<C>);

impl<C> Clone for CallerContext<C> {
    fn clone(&self) -> Self {
        CallerContext(self.0.clone())
    }
}

/// Options of the Streamable HTTP endpoint: start from `default()` and
/// change what differs.
///
/// ```
/// use toolwright::mcp::HttpOptions;
///
/// let options = HttpOptions::default().stateless(true).json_response(true);
/// assert!(options.stateless && options.json_response);
/// assert!(options.allowed_origins.iter().any(|o| o.starts_with("http://localhost")));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Origins a browser page may call from (`scheme://host[:port]`, port
    /// `*` for any). Requests with another `Origin` get 403; requests with
    /// none (non-browser clients) pass. Default: loopback origins.
    pub allowed_origins: Vec<String>,
    /// Accepted `Host` headers (default: `localhost`, `127.0.0.1`, `::1`);
    /// empty accepts any, for deployments behind a proxy that checks it.
    pub allowed_hosts: Vec<String>,
    /// Larger request bodies get 413 (default 1 MiB).
    pub max_body_bytes: usize,
    /// No sessions: every request stands alone (default: sessions). Without
    /// sessions the server cannot tell clients that the tool list changed.
    pub stateless: bool,
    /// In stateless mode, answer with `application/json` instead of an SSE
    /// stream (default: off).
    pub json_response: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_origins: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
                .map(String::from)
                .to_vec(),
            allowed_hosts: ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec(),
            max_body_bytes: 1024 * 1024,
            stateless: false,
            json_response: false,
        }
    }
}

impl HttpOptions {
    /// Replaces the allowed browser origins.
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Replaces the accepted `Host` headers (empty: any).
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// The largest request body accepted.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// Serve without sessions.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// In stateless mode, answer with plain JSON.
    pub fn json_response(mut self, json: bool) -> Self {
        self.json_response = json;
        self
    }
}

/// Why an HTTP request was refused before any MCP processing.
///
/// ```
/// use toolwright::mcp::Rejection;
/// assert_eq!(Rejection::unauthorized().status(), http::StatusCode::UNAUTHORIZED);
/// assert_eq!(Rejection::forbidden().status(), http::StatusCode::FORBIDDEN);
/// ```
#[derive(Debug, Clone)]
pub struct Rejection {
    status: http::StatusCode,
    message: String,
}

impl Rejection {
    /// 401, with `WWW-Authenticate: Bearer`: no or bad credentials.
    pub fn unauthorized() -> Self {
        Rejection {
            status: http::StatusCode::UNAUTHORIZED,
            message: "Unauthorized".into(),
        }
    }

    /// 403: valid credentials that may not use this server.
    pub fn forbidden() -> Self {
        Rejection {
            status: http::StatusCode::FORBIDDEN,
            message: "Forbidden".into(),
        }
    }

    /// Another status, with a message for the client.
    pub fn new(status: http::StatusCode, message: impl Into<String>) -> Self {
        Rejection {
            status,
            message: message.into(),
        }
    }

    /// The HTTP status the request gets.
    pub fn status(&self) -> http::StatusCode {
        self.status
    }

    fn into_response(self) -> axum::response::Response {
        let mut response = axum::response::IntoResponse::into_response((self.status, self.message));
        if self.status == http::StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}

/// The token of an `Authorization: Bearer <token>` header, or `None`
/// without one. The scheme is matched in any case (`bearer`, `BEARER`):
/// HTTP authentication schemes are case-insensitive (RFC 9110, 11.1).
///
/// For an `authenticate` function of [`McpServer::http_router`]:
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
    let value = headers.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim_matches(' ');
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
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
fn too_large(limit: usize) -> axum::response::Response {
    let message = format!("the request body is over the limit of {limit} bytes");
    axum::response::IntoResponse::into_response((http::StatusCode::PAYLOAD_TOO_LARGE, message))
}

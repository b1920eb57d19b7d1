//! The Streamable HTTP endpoint: authentication, limits and the router.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::auth::{Authenticate, WELL_KNOWN};
use super::listener::{self, Limits};
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
        A: Authenticate<C>,
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
        let metadata = authenticate.resource_metadata().cloned();
        let metadata_url = metadata.as_ref().map(|m| Arc::<str>::from(m.url()));
        let endpoint = endpoint.layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let authenticate = authenticate.clone();
                let metadata_url = metadata_url.clone();
                async move {
                    let (mut parts, body) = request.into_parts();
                    match authenticate.authenticate(&parts).await {
                        Ok(ctx) => {
                            parts.extensions.insert(CallerContext(Arc::new(ctx)));
                            let request = axum::extract::Request::from_parts(parts, body);
                            next.run(request).await
                        }
                        Err(rejection) => rejection.into_response(metadata_url.as_deref()),
                    }
                }
            },
        ));
        // Protected-resource metadata is public: served beside the
        // endpoint, outside authentication.
        let endpoint = match metadata {
            Some(metadata) => {
                let json = serde_json::to_string(&metadata).unwrap_or_default();
                let json = axum::body::Bytes::from(json);
                let serve = move || {
                    let content_type = [(http::header::CONTENT_TYPE, "application/json")];
                    std::future::ready((content_type, json.clone()))
                };
                let mut router = endpoint.route(WELL_KNOWN, axum::routing::get(serve.clone()));
                let at_path = format!("{WELL_KNOWN}{}", metadata.path());
                if at_path != WELL_KNOWN {
                    router = router.route(&at_path, axum::routing::get(serve));
                }
                router
            }
            None => endpoint,
        };
        endpoint
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
    ///
    /// It owns the connections, so it enforces `options.max_connections`,
    /// `options.header_timeout` and `options.idle_timeout` (see
    /// [`McpServer::serve_http_on`]).
    pub async fn serve_http<A>(
        self,
        addr: SocketAddr,
        authenticate: A,
        options: HttpOptions,
    ) -> Result<(), ServeError>
    where
        A: Authenticate<C>,
    {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| ServeError::new(format!("cannot bind {addr}"), e))?;
        self.serve_http_on(listener, authenticate, options).await
    }

    /// Serves [`McpServer::http_router`] on a listener the application has
    /// bound (on a port the system chose, say, or a socket handed over by
    /// systemd, converted with [`TcpListener::from_std`](tokio::net::TcpListener::from_std)),
    /// until the process ends.
    ///
    /// Over HTTP/1.1, with the connection limits of `options`: at most
    /// `max_connections` connections open at once (one more is answered
    /// 503 and closed), a request's head within `header_timeout` of its
    /// first byte, and a connection with no request in progress closed
    /// after `idle_timeout`. A request in progress, a long tool call or an
    /// open event stream, is never cut by either timeout. An error
    /// accepting a connection (too many open files, say) is logged and
    /// retried after a pause, never returned.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tokio::io::AsyncReadExt;
    /// use toolwright::mcp::{allow_anonymous, HttpOptions, McpServer};
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let executor = Executor::new(Catalog::builder().build()?, Container::default())?;
    /// let server = McpServer::<()>::new(executor, "demo", "0.1.0");
    /// // Port 0: the system picks a free one.
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let addr = listener.local_addr()?;
    /// let options = HttpOptions::default()
    ///     .max_connections(64)
    ///     .idle_timeout(Duration::from_millis(100));
    /// tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));
    ///
    /// // A connection that sends no request is closed once idle too long.
    /// let mut silent = tokio::net::TcpStream::connect(addr).await?;
    /// assert_eq!(silent.read(&mut [0; 64]).await?, 0);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_http_on<A>(
        self,
        listener: tokio::net::TcpListener,
        authenticate: A,
        options: HttpOptions,
    ) -> Result<(), ServeError>
    where
        A: Authenticate<C>,
    {
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::new("cannot read the listener's address", e))?;
        if authenticate.is_anonymous() && !addr.ip().is_loopback() {
            tracing::warn!(
                %addr,
                "MCP over HTTP lets every request in without credentials (allow_anonymous) \
                 on an address other machines can reach"
            );
        }
        let limits = Limits {
            max_connections: options.max_connections,
            header_timeout: options.header_timeout,
            idle_timeout: options.idle_timeout,
        };
        let router = self.http_router(authenticate, options);
        // Serves until the process ends: there is no value to return.
        match listener::serve(listener, router, limits).await {}
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
    /// A request's body must arrive whole within this time, or the request
    /// gets 408 (default 30 s).
    pub body_timeout: Duration,
    /// A connection must send a request's headers within this time of
    /// starting to send them, or it is closed (default 10 s). Applies to
    /// [`McpServer::serve_http`] and [`McpServer::serve_http_on`], which
    /// own the connections.
    pub header_timeout: Duration,
    /// A connection with no request in progress is closed after this time
    /// (default 60 s). Applies to [`McpServer::serve_http`] and
    /// [`McpServer::serve_http_on`].
    pub idle_timeout: Duration,
    /// At most this many connections are open at once; one more is
    /// answered 503 and closed (default 512). Applies to
    /// [`McpServer::serve_http`] and [`McpServer::serve_http_on`].
    pub max_connections: usize,
    /// At most this many sessions exist at once; an `initialize` over it is
    /// refused with 503 (default 1,000).
    pub max_sessions: usize,
    /// At most this many sessions per principal; an `initialize` over it
    /// is refused with 429 (default 16).
    pub max_sessions_per_principal: usize,
    /// A session without a request for this long is closed (default 5 min).
    pub session_idle_timeout: Duration,
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
            body_timeout: Duration::from_secs(30),
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 512,
            max_sessions: 1000,
            max_sessions_per_principal: 16,
            session_idle_timeout: Duration::from_secs(300),
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

    /// The time a request's body may take to arrive.
    pub fn body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout;
        self
    }

    /// The time a connection may take to send a request's headers.
    pub fn header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout;
        self
    }

    /// The time a connection may stay open with no request in progress.
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The most connections open at once.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.max_connections = connections;
        self
    }

    /// The most sessions at once, and per principal.
    pub fn max_sessions(mut self, total: usize, per_principal: usize) -> Self {
        self.max_sessions = total;
        self.max_sessions_per_principal = per_principal;
        self
    }

    /// The time a session may go without a request before it is closed.
    pub fn session_idle_timeout(mut self, timeout: Duration) -> Self {
        self.session_idle_timeout = timeout;
        self
    }
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

//! The Streamable HTTP endpoint: authentication, limits and the router.

use std::any::Any;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::auth::{Authenticate, WELL_KNOWN};
use super::http_body;
use super::http_sessions::{SessionGuard, credentials_owner};
use super::listener::{self, Limits};
use super::{McpHandler, McpServer, ServeError};

impl<C: Any + Send + Sync> McpServer<C> {
    /// A Streamable HTTP endpoint at `/mcp`, to mount in the application's
    /// own axum router.
    ///
    /// Each request goes through, in order:
    /// - CORS: a browser's preflight from an allowed origin
    ///   (`options.allowed_origins`) is answered, and responses carry the
    ///   `Access-Control-*` headers it needs;
    /// - a declared `Content-Length` over `options.max_body_bytes`: 413
    ///   before anything is read;
    /// - `authenticate`, which turns the request's HTTP parts (headers such
    ///   as a bearer token) into the caller's context, or refuses it with a
    ///   [`Rejection`](super::Rejection) (401s name the [`ResourceMetadata`](super::ResourceMetadata)
    ///   it has, which is served at `/.well-known/oauth-protected-resource`);
    /// - sessions: a session belongs to the principal that opened it (its
    ///   [`Principal::id`](crate::Principal::id) when the executor knows the
    ///   context type, else its credentials), and any other gets 404 for it;
    ///   a new session over `max_sessions` gets 503, over
    ///   `max_sessions_per_principal` 429, and one idle for
    ///   `session_idle_timeout` is closed;
    /// - the body, read whole within `body_timeout` (else 408) and
    ///   `max_body_bytes` (else 413); one that is not JSON gets 400 with a
    ///   JSON-RPC -32700 error, one that is no JSON-RPC message (a batch,
    ///   say) 400 with -32600;
    /// - rmcp, which checks `Origin` and `Host` (DNS-rebinding protection)
    ///   and serves MCP.
    ///
    /// The connection limits of [`HttpOptions`] apply where the server owns
    /// the connections: [`McpServer::serve_http`].
    pub fn http_router<A>(&self, authenticate: A, options: HttpOptions) -> axum::Router
    where
        A: Authenticate<C>,
    {
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
        let (body_timeout, max_body_bytes) = (options.body_timeout, options.max_body_bytes);
        let read_body = axum::middleware::from_fn(move |request, next| {
            http_body::read_body(body_timeout, max_body_bytes, request, next)
        });
        let endpoint = if options.stateless {
            let service = StreamableHttpService::new(
                factory,
                Arc::new(NeverSessionManager::default()),
                config,
            );
            axum::Router::new()
                .nest_service("/mcp", Endpoint(Arc::new(service)))
                .layer(read_body)
        } else {
            let mut manager = LocalSessionManager::default();
            // rmcp's own idle timer closes what the guard no longer lists.
            manager.session_config.keep_alive = Some(options.session_idle_timeout);
            let manager = Arc::new(manager);
            // Anonymous callers are all one principal: a cap per principal
            // would be everyone's, and clients that never end their
            // sessions would soon shut out the rest.
            let per_principal = if authenticate.is_anonymous() {
                options.max_sessions
            } else {
                options.max_sessions_per_principal
            };
            let guard = SessionGuard::new(
                manager.clone(),
                options.max_sessions,
                per_principal,
                options.session_idle_timeout,
            );
            let service = StreamableHttpService::new(factory, manager, config);
            let shared = self.shared.clone();
            axum::Router::new()
                .nest_service("/mcp", Endpoint(Arc::new(service)))
                .layer(read_body)
                .layer(axum::middleware::from_fn(
                    move |request: axum::extract::Request, next: axum::middleware::Next| {
                        let owner = request
                            .extensions()
                            .get::<CallerContext<C>>()
                            .and_then(|caller| shared.executor.actor(&*caller.0))
                            .map(Arc::from)
                            .unwrap_or_else(|| credentials_owner(request.headers()));
                        guard.clone().serve(owner, request, next)
                    },
                ))
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
            // A body declared too large is refused before anything waits
            // for it (or for credentials).
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| async move {
                    if declared_length(request.headers()).is_some_and(|n| n > max_body_bytes as u64)
                    {
                        return too_large(max_body_bytes);
                    }
                    next.run(request).await
                },
            ))
            // Outermost: a preflight carries no credentials.
            .layer(cors(&options.allowed_origins))
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
    /// is refused with 429 (default 16). Not applied to an
    /// [`allow_anonymous`](super::allow_anonymous) endpoint, whose callers
    /// are all one principal.
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
pub(super) fn too_large(limit: usize) -> axum::response::Response {
    let message = format!("the request body is over the limit of {limit} bytes");
    axum::response::IntoResponse::into_response((http::StatusCode::PAYLOAD_TOO_LARGE, message))
}

/// CORS for the allowed origins: a preflight from one of them is answered
/// with what the endpoint accepts, and responses to it expose the session
/// and authentication headers a page needs. Other origins get no
/// `Access-Control-*` headers (and rmcp refuses their requests).
fn cors(allowed: &[String]) -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
    let allowed: Arc<[AllowedOrigin]> = allowed
        .iter()
        .filter_map(|o| AllowedOrigin::parse(o))
        .collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            let origin = origin.to_str().ok().and_then(Origin::parse);
            origin.is_some_and(|origin| allowed.iter().any(|a| a.admits(&origin)))
        }))
        .allow_methods([http::Method::GET, http::Method::POST, http::Method::DELETE])
        // Whatever the page asks to send (Authorization, Mcp-Session-Id,
        // MCP-Protocol-Version, ...): only allowed origins get an answer.
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([
            http::HeaderName::from_static("mcp-session-id"),
            http::HeaderName::from_static("mcp-protocol-version"),
            http::header::WWW_AUTHENTICATE,
        ])
        .max_age(Duration::from_secs(600))
}

/// A request's `Origin`: scheme, host and port (the scheme's default when
/// it names none).
#[derive(Debug, PartialEq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    fn parse(origin: &str) -> Option<Origin> {
        let uri = http::Uri::try_from(origin.trim()).ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        let default = match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        Some(Origin {
            host: authority
                .host()
                .trim_matches(['[', ']'])
                .to_ascii_lowercase(),
            port: authority.port_u16().or(default),
            scheme,
        })
    }
}

/// An entry of [`HttpOptions::allowed_origins`], read as rmcp reads it:
/// `scheme://host[:port]`, port `*` for any, no port for any (as rmcp
/// still accepts).
struct AllowedOrigin {
    origin: Origin,
    any_port: bool,
}

impl AllowedOrigin {
    fn parse(entry: &str) -> Option<AllowedOrigin> {
        let entry = entry.trim();
        let (base, star) = match entry.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (entry, false),
        };
        let origin = Origin::parse(base)?;
        let names_port = http::Uri::try_from(base).ok()?.port_u16().is_some();
        Some(AllowedOrigin {
            any_port: star || !names_port,
            origin,
        })
    }

    fn admits(&self, origin: &Origin) -> bool {
        self.origin.scheme == origin.scheme
            && self.origin.host == origin.host
            && (self.any_port || self.origin.port == origin.port)
    }
}

/// rmcp's service behind an `Arc`. axum clones the service under each
/// layer for every request, and rmcp's carries its whole configuration
/// (origin and host lists): shared, a request costs a reference count.
struct Endpoint<S, M>(Arc<StreamableHttpService<S, M>>);

impl<S, M> Clone for Endpoint<S, M> {
    fn clone(&self) -> Self {
        Endpoint(self.0.clone())
    }
}

impl<S, M> tower_service::Service<axum::extract::Request> for Endpoint<S, M>
where
    S: rmcp::ServerHandler + Send + 'static,
    M: rmcp::transport::streamable_http_server::SessionManager,
{
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::BoxFuture<'static, Result<Self::Response, Self::Error>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: axum::extract::Request) -> Self::Future {
        let service = self.0.clone();
        Box::pin(async move {
            let response = service.handle(request).await;
            Ok(axum::response::IntoResponse::into_response(response))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_origins_match_as_rmcp_matches_them() {
        let admits = |entry: &str, origin: &str| {
            AllowedOrigin::parse(entry)
                .unwrap()
                .admits(&Origin::parse(origin).unwrap())
        };
        assert!(admits("http://localhost:*", "http://localhost:5173"));
        assert!(admits("http://localhost:*", "http://LOCALHOST"));
        assert!(!admits("http://localhost:*", "https://localhost:5173"));
        assert!(!admits(
            "http://localhost:*",
            "http://localhost.evil.com:80"
        ));
        assert!(admits("http://[::1]:*", "http://[::1]:8080"));
        assert!(admits(
            "https://app.example.com",
            "https://app.example.com:8443"
        ));
        assert!(admits(
            "https://app.example.com:443",
            "https://app.example.com"
        ));
        assert!(!admits(
            "https://app.example.com:443",
            "https://app.example.com:444"
        ));
    }
}

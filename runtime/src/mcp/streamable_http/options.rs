//! What an endpoint accepts, and for how long: origins, hosts, body size
//! and timeouts, connection and session limits.

use std::time::Duration;

use crate::web::hosts::LOOPBACK_HOSTS;
use crate::web::listener::{DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT};

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
    /// Accepted `Host` headers, `host` for any port or `host:port`
    /// (default: `localhost`, `127.0.0.1`, `::1`); a request for another
    /// gets 403, one with none 400. Empty accepts any, for deployments
    /// behind a proxy that checks it.
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
    ///
    /// [`McpServer::serve_http`]: crate::mcp::McpServer::serve_http
    /// [`McpServer::serve_http_on`]: crate::mcp::McpServer::serve_http_on
    pub header_timeout: Duration,
    /// A connection with no request in progress is closed after this time
    /// (default 60 s). Applies to [`McpServer::serve_http`] and
    /// [`McpServer::serve_http_on`].
    ///
    /// [`McpServer::serve_http`]: crate::mcp::McpServer::serve_http
    /// [`McpServer::serve_http_on`]: crate::mcp::McpServer::serve_http_on
    pub idle_timeout: Duration,
    /// At most this many connections are open at once; one more is
    /// answered 503 and closed (default 512). Applies to
    /// [`McpServer::serve_http`] and [`McpServer::serve_http_on`].
    ///
    /// [`McpServer::serve_http`]: crate::mcp::McpServer::serve_http
    /// [`McpServer::serve_http_on`]: crate::mcp::McpServer::serve_http_on
    pub max_connections: usize,
    /// At most this many sessions exist at once; an `initialize` over it is
    /// refused with 503 (default 1,000).
    pub max_sessions: usize,
    /// At most this many sessions per principal; an `initialize` over it
    /// is refused with 429 (default 16). Not applied to an
    /// [`allow_anonymous`](crate::mcp::allow_anonymous) endpoint, whose callers
    /// are all one principal.
    pub max_sessions_per_principal: usize,
    /// A session without a request for this long is closed (default 5 min).
    pub session_idle_timeout: Duration,
    /// Serves the tools as a REST API too (feature `openapi`; default
    /// off): see [`HttpOptions::rest`].
    #[cfg(feature = "openapi")]
    pub rest: bool,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            allowed_origins: ["http://localhost:*", "http://127.0.0.1:*", "http://[::1]:*"]
                .map(String::from)
                .to_vec(),
            allowed_hosts: LOOPBACK_HOSTS.map(String::from).to_vec(),
            max_body_bytes: 1024 * 1024,
            stateless: false,
            json_response: false,
            body_timeout: Duration::from_secs(30),
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_connections: 512,
            max_sessions: 1000,
            max_sessions_per_principal: 16,
            session_idle_timeout: Duration::from_secs(300),
            #[cfg(feature = "openapi")]
            rest: false,
        }
    }
}

impl HttpOptions {
    /// Serves the tools as a REST API beside `/mcp` (feature `openapi`):
    /// `POST /api/tools/{name}` with the arguments as its JSON body, and
    /// the caller's OpenAPI 3.1 document at `GET /api/openapi.json` (see
    /// [`openapi`](crate::openapi)). Requests pass the same `Host` check,
    /// CORS, body limits and authentication as MCP's, and calls the same
    /// views, policy and approvals; each answer's status says what
    /// happened (200 a result, 202 an approval to wait for, 403, 404, 422
    /// with the violations).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::mcp::{allow_anonymous, HttpOptions, McpServer};
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let catalog = Catalog::builder().register::<AddArgs>().build()?;
    /// let server = McpServer::new(Executor::new(catalog, Container::default())?, "calc", "1.0.0");
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let addr = listener.local_addr()?;
    /// let options = HttpOptions::default().rest(true);
    /// tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));
    ///
    /// let client = reqwest::Client::new();
    /// let sum: i64 = client
    ///     .post(format!("http://{addr}/api/tools/add"))
    ///     .json(&json!({"a": 2, "b": 3}))
    ///     .send().await?
    ///     .json().await?;
    /// assert_eq!(sum, 5);
    /// let document: serde_json::Value =
    ///     client.get(format!("http://{addr}/api/openapi.json")).send().await?.json().await?;
    /// assert_eq!(document["paths"]["/tools/add"]["post"]["operationId"], "add");
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "openapi")]
    pub fn rest(mut self, serve: bool) -> Self {
        self.rest = serve;
        self
    }

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

    /// The options of a replica behind a load balancer: no sessions and
    /// plain JSON answers (`stateless` and `json_response`), so that any
    /// replica answers any request and nothing needs sticky routing. MCP
    /// 2026-07-28 clients still hear of tool list changes, on their
    /// `subscriptions/listen` request; older clients that want them need a
    /// session, and so one replica. What replicas share (approvals, the
    /// registry's state, idempotency keys) goes in PostgreSQL: see
    /// [`PostgresLedger`](crate::approval::PostgresLedger),
    /// [`PostgresSync`](crate::registry::PostgresSync) and
    /// [`PostgresKeys`](crate::idempotency::PostgresKeys) (feature `postgres`).
    ///
    /// ```
    /// use toolwright::mcp::HttpOptions;
    ///
    /// let options = HttpOptions::replica().max_connections(2_000);
    /// assert!(options.stateless && options.json_response);
    /// ```
    pub fn replica() -> Self {
        HttpOptions::default().stateless(true).json_response(true)
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

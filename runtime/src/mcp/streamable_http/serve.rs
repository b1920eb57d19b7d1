//! The endpoint on connections the server owns: bound to an address, or
//! on a listener the application hands over, within the connection limits
//! of [`HttpOptions`].

use std::any::Any;
use std::net::SocketAddr;

use super::options::HttpOptions;
use crate::mcp::auth::Authenticate;
use crate::mcp::error::ServeError;
use crate::mcp::server::McpServer;
use crate::web::listener::{self, Limits};

impl<C: Any + Send + Sync> McpServer<C> {
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
        match listener::serve(listener, router, limits, "MCP over HTTP").await {}
    }
}

/// Where [`McpServer::serve_http`] listens by default: loopback only.
///
/// ```
/// assert!(toolwright::mcp::DEFAULT_HTTP_ADDR.ip().is_loopback());
/// ```
pub const DEFAULT_HTTP_ADDR: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 8000);

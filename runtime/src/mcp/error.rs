//! Why serving stopped.

/// The server stopped with an error.
///
/// ```
/// use std::net::SocketAddr;
/// use toolwright::mcp::{HttpOptions, McpServer, Rejection};
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
/// let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr: SocketAddr = taken.local_addr().unwrap();
/// // The port is in use: serving fails with a message naming it.
/// let error = McpServer::<()>::new(executor, "demo", "0.1.0")
///     .serve_http(addr, |_: &http::request::Parts| Err(Rejection::unauthorized()), HttpOptions::default())
///     .await
///     .unwrap_err();
/// assert!(error.to_string().contains(&addr.to_string()));
/// // The operating system's error is kept as the source.
/// let source = std::error::Error::source(&error).unwrap();
/// let io = source.downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse);
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[error("MCP server: {what}")]
pub struct ServeError {
    what: String,
    /// What rmcp, axum or the operating system reported.
    #[source]
    source: crate::error::BoxError,
}

impl ServeError {
    pub(super) fn new(what: impl Into<String>, source: impl Into<crate::error::BoxError>) -> Self {
        ServeError {
            what: what.into(),
            source: source.into(),
        }
    }
}

//! Serving the admin on its own port: loopback unless asked otherwise,
//! with its connections capped and timed out.

use std::io;
use std::net::SocketAddr;

use super::Admin;
use crate::web::listener;

/// Why [`serve`] or [`serve_on`] did not (or no longer does) serve.
///
/// ```
/// use toolwright::admin::{self, Admin, Operator, ServeError};
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
/// let admin = Admin::new(executor).operator("a-long-random-token", Operator::new("ops"));
/// let error = admin::serve("0.0.0.0:8001".parse().unwrap(), admin).await.unwrap_err();
/// assert!(matches!(error, ServeError::NotLoopback { .. }));
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address is reachable from other machines, and the admin was not
    /// made [`public`](Admin::public).
    #[error(
        "the admin would listen on {addr}, which other machines can reach: serve it on loopback \
         (127.0.0.1 or ::1) behind a proxy, or call `Admin::public` to mean it"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The admin has no operator: no request could ever get in.
    #[error("the admin has no operator token: add one with `Admin::operator`")]
    NoOperators,
    /// The address could not be bound.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// Serving failed.
    #[error("the admin stopped serving")]
    Io(#[source] io::Error),
}

/// Binds `addr` and serves `admin`'s [router](Admin::router) at its root
/// until the process ends. Refuses an address other than loopback unless
/// the admin is [`public`](Admin::public), and an admin with no operator.
///
/// ```no_run
/// use toolwright::admin::{self, Admin, Operator};
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let executor = Executor::new(Catalog::builder().build()?, Container::default())?;
/// let token = std::env::var("ADMIN_TOKEN")?;
/// let admin = Admin::new(executor).operator(token, Operator::new("ops"));
/// // The page is at http://127.0.0.1:8001/
/// admin::serve("127.0.0.1:8001".parse()?, admin).await?;
/// # Ok(())
/// # }
/// ```
pub async fn serve(addr: SocketAddr, admin: Admin) -> Result<(), ServeError> {
    check(addr, &admin)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })?;
    serve_on(listener, admin).await
}

/// Serves `admin` on a listener the application bound (on a port the
/// system chose, say), with the same checks as [`serve`].
///
/// Over HTTP/1.1, with the admin's connection limits: at most
/// [`max_connections`](Admin::max_connections) open at once (one more is
/// answered 503 and closed), a request's head within
/// [`header_timeout`](Admin::header_timeout) of its first byte, and a
/// connection with no request in progress closed after
/// [`idle_timeout`](Admin::idle_timeout). An error accepting a connection
/// (too many open files, say) is logged and retried after a pause, never
/// returned.
///
/// ```
/// use std::time::Duration;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// use toolwright::admin::{self, Admin, Operator};
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let executor = Executor::new(Catalog::builder().build()?, Container::default())?;
/// let admin = Admin::new(executor)
///     .operator("a-long-random-token", Operator::new("ops"))
///     .header_timeout(Duration::from_millis(100));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let addr = listener.local_addr()?;
/// println!("admin at http://{addr}/");
/// tokio::spawn(admin::serve_on(listener, admin));
///
/// // A request whose head never ends is closed once its time is up.
/// let mut slow = tokio::net::TcpStream::connect(addr).await?;
/// slow.write_all(b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n").await?;
/// assert_eq!(slow.read(&mut [0; 64]).await?, 0);
/// # Ok(())
/// # }
/// ```
pub async fn serve_on(listener: tokio::net::TcpListener, admin: Admin) -> Result<(), ServeError> {
    let addr = listener.local_addr().map_err(ServeError::Io)?;
    check(addr, &admin)?;
    let limits = admin.shared.limits;
    // Serves until the process ends: there is no value to return.
    match listener::serve(listener, admin.router(), limits, "admin").await {}
}

fn check(addr: SocketAddr, admin: &Admin) -> Result<(), ServeError> {
    if !addr.ip().is_loopback() && !admin.is_public() {
        return Err(ServeError::NotLoopback { addr });
    }
    if admin.shared.operators.is_empty() {
        return Err(ServeError::NoOperators);
    }
    if !addr.ip().is_loopback() && admin.shared.allowed_hosts.only_loopback() {
        tracing::warn!(
            %addr,
            "the admin answers only requests for localhost, 127.0.0.1 and ::1: name the hosts \
             other machines reach it by with `Admin::allowed_hosts`"
        );
    }
    Ok(())
}

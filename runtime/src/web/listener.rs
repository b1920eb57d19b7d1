//! The connections of every port the library serves itself (MCP's
//! `serve_http`, the admin's `serve`): at most so many open at once, a
//! request's head within its own timeout, and a connection with no request
//! in progress closed once idle too long. Each port has its own cap, so a
//! flood on one leaves file descriptors for the others.
//!
//! hyper's own `header_read_timeout` starts when hyper begins waiting for a
//! head, so it counts idle keep-alive time too and cannot be two knobs.
//! Here each connection's stream is [`Watched`]: the service counts the
//! requests it starts and finishes (a request finishes when its response
//! body is done or dropped, so a long tool call or an open SSE stream is
//! never cut), and the stream, seeing no request in progress, enforces the
//! idle deadline until a byte of the next head arrives, then the header
//! deadline until that request reaches the service.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};

/// The limits [`serve`] enforces on each connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
    pub(crate) idle_timeout: Duration,
}

/// How long a request's head may take from its first byte, unless a port
/// is told otherwise.
pub(crate) const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a connection may stay open with no request in progress,
/// unless a port is told otherwise.
pub(crate) const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// At most this many connections over the cap are answered 503 at once;
/// more are closed unanswered. Each answer holds its connection for up to
/// twice [`REFUSAL_WAIT`]: unbounded, a flood would spend the descriptors
/// the cap saves on refusing.
const MAX_REFUSALS: usize = 32;

/// The answer to a connection over the cap, written whether or not its
/// request came. Written by hand, not by hyper: hyper answers only a request
/// it has read, so a client that sends nothing (the half-open connections of
/// a flood) would hold its descriptor until a timeout and get no answer.
const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
    connection: close\r\n\
    content-type: text/plain; charset=utf-8\r\n\
    content-length: 35\r\n\
    \r\n\
    too many connections, retry later\r\n";

/// How long a refused connection waits for its client's request before
/// the 503, and then to drain the rest: an HTTP client may take an answer
/// that comes before its request for a protocol error, and closing a
/// socket with unread bytes resets it, so the client may lose the answer.
const REFUSAL_WAIT: Duration = Duration::from_secs(1);

/// The pause after an error accepting a connection other than the
/// client's own (such as running out of file descriptors): retrying at
/// once would spin, and a moment lets open connections close.
const ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Serves `router` over HTTP/1.1 on each connection `listener` accepts,
/// within `limits`, until the process ends. `port` names it in logs.
pub(crate) async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: Limits,
    port: &'static str,
) -> Infallible {
    // Turns every route into its final service once, not per connection.
    let router = router.with_state(());
    let slots = Arc::new(Semaphore::new(
        limits.max_connections.min(Semaphore::MAX_PERMITS),
    ));
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS));
    let mut http = hyper::server::conn::http1::Builder::new();
    // `Watched` times heads out; hyper's own timer would count idle time too.
    http.header_read_timeout(None);
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            // The client gave up before it was accepted: nothing to do.
            Err(e) if is_client_error(&e) => continue,
            Err(e) => {
                tracing::error!(error = %e, "{port}: accepting a connection failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            match refusals.clone().try_acquire_owned() {
                Ok(refusal) => {
                    tracing::debug!(%peer, "{port}: too many connections, answered 503");
                    tokio::spawn(async move {
                        refuse(stream).await;
                        drop(refusal);
                    });
                }
                Err(_) => {
                    tracing::debug!(%peer, "{port}: too many connections, closed unanswered");
                    drop(stream);
                }
            }
            continue;
        };
        let activity = Arc::new(Activity::default());
        let io = TokioIo::new(Watched::new(stream, activity.clone(), limits));
        let service = Tracked {
            inner: TowerToHyperService::new(router.clone()),
            activity,
        };
        let connection = http.serve_connection(io, service);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(%peer, error = %e, "{port}: connection closed");
            }
            drop(slot);
        });
    }
}

/// Errors `accept` reports about one client's connection, not the listener.
fn is_client_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Answers 503 and closes, never reaching the router.
async fn refuse(mut stream: TcpStream) {
    let mut sink = [0; 1024];
    let _ = tokio::time::timeout(REFUSAL_WAIT, stream.read(&mut sink)).await;
    let answer = async {
        stream.write_all(BUSY).await?;
        stream.shutdown().await?;
        while stream.read(&mut sink).await? > 0 {}
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(REFUSAL_WAIT, answer).await;
}

/// The requests one connection's service has started and finished. Both
/// change on the connection's own task, where [`Watched`] reads them.
#[derive(Debug, Default)]
struct Activity {
    started: AtomicUsize,
    finished: AtomicUsize,
}

/// Marks a request in progress until dropped: first in the service's
/// future, then in the response body.
struct InProgress(Arc<Activity>);

impl InProgress {
    fn start(activity: &Arc<Activity>) -> Self {
        activity.started.fetch_add(1, Ordering::Relaxed);
        InProgress(activity.clone())
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.finished.fetch_add(1, Ordering::Relaxed);
    }
}

/// The router, counting the requests in progress on its connection.
struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S, B> hyper::service::Service<http::Request<Incoming>> for Tracked<S>
where
    S: hyper::service::Service<http::Request<Incoming>, Response = http::Response<B>>,
{
    type Response = http::Response<TrackedBody<B>>;
    type Error = S::Error;
    type Future = TrackedFuture<S::Future>;

    fn call(&self, request: http::Request<Incoming>) -> Self::Future {
        // Counted here, not when the future is first polled: hyper calls
        // this as soon as the head is read, which ends its deadline.
        let progress = InProgress::start(&self.activity);
        TrackedFuture {
            inner: self.inner.call(request),
            progress: Some(progress),
        }
    }
}

pin_project_lite::pin_project! {
    /// The router's answer, whose body keeps the request in progress.
    struct TrackedFuture<F> {
        #[pin]
        inner: F,
        progress: Option<InProgress>,
    }
}

impl<F, B, E> Future for TrackedFuture<F>
where
    F: Future<Output = Result<http::Response<B>, E>>,
{
    type Output = Result<http::Response<TrackedBody<B>>, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = ready!(this.inner.poll(cx))?;
        let progress = this.progress.take();
        Poll::Ready(Ok(response.map(|inner| TrackedBody {
            inner,
            _progress: progress,
        })))
    }
}

pin_project_lite::pin_project! {
    /// A response body; the request is in progress until it is done.
    struct TrackedBody<B> {
        #[pin]
        inner: B,
        _progress: Option<InProgress>,
    }
}

impl<B: Body> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().inner.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// What a connection is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// A request: none is in progress and no byte of the next has come.
    Idle,
    /// The rest of a request's head, whose first bytes have come.
    Head,
    /// Nothing: a request is in progress, which no deadline cuts.
    Busy,
}

/// A connection's stream, closed when its idle or header deadline passes.
struct Watched {
    stream: TcpStream,
    activity: Arc<Activity>,
    /// How many requests had finished when the phase was last brought up
    /// to date.
    finished: usize,
    phase: Phase,
    deadline: Pin<Box<Sleep>>,
    limits: Limits,
}

impl Watched {
    fn new(stream: TcpStream, activity: Arc<Activity>, limits: Limits) -> Self {
        Watched {
            stream,
            activity,
            finished: 0,
            phase: Phase::Idle,
            deadline: Box::pin(tokio::time::sleep(limits.idle_timeout)),
            limits,
        }
    }

    /// Brings the phase up to date with the requests the service started
    /// and finished since it was last looked at.
    fn observe(&mut self, cx: &mut Context<'_>) {
        let started = self.activity.started.load(Ordering::Relaxed);
        let finished = self.activity.finished.load(Ordering::Relaxed);
        if started != finished {
            self.phase = Phase::Busy;
        } else if finished != self.finished {
            self.finished = finished;
            self.phase = Phase::Idle;
            let deadline = Instant::now() + self.limits.idle_timeout;
            self.deadline.as_mut().reset(deadline);
            // Without a timer of its own, hyper does not read again after
            // a response until something wakes the connection: the
            // deadline must.
            if self.deadline.as_mut().poll(cx).is_ready() {
                cx.waker().wake_by_ref();
            }
        }
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        this.observe(cx);
        if this.phase == Phase::Busy {
            return Pin::new(&mut this.stream).poll_read(cx, buf);
        }
        if this.deadline.as_mut().poll(cx).is_ready() {
            let waited = match this.phase {
                Phase::Head => "the rest of a request's head",
                _ => "a request",
            };
            let message = format!("closed after waiting too long for {waited}");
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::TimedOut, message)));
        }
        let before = buf.filled().len();
        let read = Pin::new(&mut this.stream).poll_read(cx, buf);
        if this.phase == Phase::Idle && buf.filled().len() > before {
            this.phase = Phase::Head;
            let deadline = Instant::now() + this.limits.header_timeout;
            this.deadline.as_mut().reset(deadline);
        }
        read
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        // hyper flushes the end of every response: the idle deadline starts
        // here when it does not read again first.
        this.observe(cx);
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

//! The one session with an upstream, started again when it is lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::{RoleClient, RunningService};

use super::ImportError;
use super::client::{Hub, Listener};
use crate::error::BoxError;
use crate::util::BoxFuture;

/// A session past MCP's handshake.
pub(super) type Session = RunningService<RoleClient, Listener>;

/// How a lost session is replaced: the transport started again and the
/// handshake made again.
pub(super) type Start =
    Box<dyn Fn() -> BoxFuture<'static, Result<Session, ImportError>> + Send + Sync>;

/// The wait after a failed start; it doubles with each failure in a row.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// The longest wait between two starts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The session every imported tool of one upstream calls through. A call
/// that finds it lost (the server died, the transport closed) starts a new
/// one first: that call had not been sent, so it is not a retry. A call
/// that was in flight when the session was lost fails; the next one
/// reconnects. After a failed start, calls fail at once until its backoff
/// has passed.
pub(super) struct Connection {
    state: tokio::sync::Mutex<State>,
    start: Start,
    /// At most this many calls in flight, if capped; the rest wait their
    /// turn, first come first served, within their timeout.
    permits: Option<tokio::sync::Semaphore>,
    /// What the client side of its sessions shares: woken after a lost
    /// session was replaced (the new one may serve other definitions).
    hub: Arc<Hub>,
}

struct State {
    session: Option<Arc<Session>>,
    failures: u32,
    retry_at: Option<Instant>,
}

impl Connection {
    pub(super) fn new(
        session: Session,
        start: Start,
        max_concurrent: Option<usize>,
        hub: Arc<Hub>,
    ) -> Self {
        Connection {
            state: tokio::sync::Mutex::new(State {
                session: Some(Arc::new(session)),
                failures: 0,
                retry_at: None,
            }),
            start,
            permits: max_concurrent.map(|n| tokio::sync::Semaphore::new(n.max(1))),
            hub,
        }
    }

    /// What the client side of its sessions shares.
    #[cfg(feature = "mcp")]
    pub(super) fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// Waits for a turn, if calls are capped: the call keeps it until it
    /// ends.
    pub(super) async fn turn(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        // Never closed: `acquire` cannot fail.
        self.permits.as_ref()?.acquire().await.ok()
    }

    /// The session to send a call on: the current one, or a new one.
    pub(super) async fn session(&self) -> Result<Arc<Session>, BoxError> {
        let mut state = self.state.lock().await;
        if let Some(session) = &state.session
            && !session.is_closed()
            && !session.is_transport_closed()
        {
            return Ok(session.clone());
        }
        state.session = None;
        let now = Instant::now();
        if let Some(at) = state.retry_at.filter(|at| now < *at) {
            let wait = at - now;
            return Err(format!("the upstream is down; it is started again in {wait:.1?}").into());
        }
        match (self.start)().await {
            Ok(session) => {
                let session = Arc::new(session);
                (state.session, state.failures, state.retry_at) = (Some(session.clone()), 0, None);
                self.hub.changed.notify_one();
                Ok(session)
            }
            Err(error) => {
                let backoff = FIRST_BACKOFF.saturating_mul(1 << state.failures.min(16));
                state.failures += 1;
                state.retry_at = Some(Instant::now() + backoff.min(MAX_BACKOFF));
                Err(error.into())
            }
        }
    }
}

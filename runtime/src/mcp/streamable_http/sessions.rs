//! Streamable HTTP sessions bound to the principal that created them, and
//! capped: in total, per principal, and by idle time.
//!
//! rmcp keeps the sessions; this guard stands in front of it and knows who
//! opened each one. A request naming a session of another principal is
//! answered 404, exactly as an unknown session is, so a session id learnt
//! from a log or a proxy is worth nothing to anyone else: they can neither
//! call in it, read its stream, cancel its calls nor delete it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use sha2::{Digest as _, Sha256};

use crate::web::credentials::scheme_and_credentials;

/// The header naming a request's session.
const SESSION_ID: &str = "mcp-session-id";

/// Who opened a session: the caller's [`Principal::id`](crate::Principal::id)
/// when the executor knows it, else a hash of the request's credentials.
pub(super) type Owner = Arc<str>;

/// The owner of a request whose context has no principal id: the
/// credentials it came with, hashed (never kept in the clear). Requests
/// without credentials (anonymous endpoints) all share one owner.
///
/// The credentials as they authenticate ([`bearer_token`](crate::mcp::bearer_token)
/// reads them the same way), not as they are spelt: the scheme in any
/// case and any run of spaces around the token are one owner (`Bearer t`,
/// `bearer  t`), or a thousand spellings of one token would each get the
/// per-principal cap of sessions.
pub(super) fn credentials_owner(headers: &http::HeaderMap) -> Owner {
    match headers.get(http::header::AUTHORIZATION) {
        Some(value) => {
            let digest = match value.to_str().ok().and_then(scheme_and_credentials) {
                Some((scheme, credentials)) => Sha256::new()
                    .chain_update(scheme.to_ascii_lowercase())
                    .chain_update(" ")
                    .chain_update(credentials)
                    .finalize(),
                None => Sha256::digest(value.as_bytes()),
            };
            let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
            Arc::from(format!("credentials:{hex}"))
        }
        None => Arc::from("anonymous"),
    }
}

/// The guard: the sessions it let open, and its limits.
pub(super) struct SessionGuard {
    table: Mutex<Table>,
    manager: Arc<LocalSessionManager>,
    max_sessions: usize,
    max_per_principal: usize,
    idle_timeout: Duration,
}

#[derive(Default)]
struct Table {
    sessions: HashMap<Box<str>, Session>,
    /// `initialize` requests under way, by owner: counted against the caps
    /// so that many at once cannot all slip under them.
    starting: HashMap<Owner, usize>,
}

struct Session {
    owner: Owner,
    last_seen: Instant,
    /// Requests in progress, whose responses (streams included) are not
    /// yet finished: a session busy with a long call is not idle.
    in_flight: usize,
}

impl Table {
    fn starting(&self) -> usize {
        self.starting.values().sum()
    }

    fn owned_by(&self, owner: &str) -> usize {
        let open = self
            .sessions
            .values()
            .filter(|s| &*s.owner == owner)
            .count();
        open + self.starting.get(owner).copied().unwrap_or(0)
    }
}

impl SessionGuard {
    pub(super) fn new(
        manager: Arc<LocalSessionManager>,
        max_sessions: usize,
        max_per_principal: usize,
        idle_timeout: Duration,
    ) -> Arc<Self> {
        Arc::new(SessionGuard {
            table: Mutex::new(Table::default()),
            manager,
            max_sessions,
            max_per_principal,
            idle_timeout,
        })
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        // The table stays consistent across a panic: every change is one
        // map operation.
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many sessions are open now.
    #[cfg(test)]
    fn open(&self) -> usize {
        self.table().sessions.len()
    }

    /// Serves `request` for `owner`, inside the session it names (if its
    /// owner is `owner`) or opening one (if the caps allow).
    pub(super) async fn serve(
        self: Arc<Self>,
        owner: Owner,
        request: Request,
        next: Next,
    ) -> Response {
        let named = request
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(Box::<str>::from);
        match named {
            Some(id) => self.within(owner, id, request, next).await,
            None if request.method() == http::Method::POST => {
                self.opening(owner, request, next).await
            }
            // rmcp answers a GET or DELETE without a session itself.
            None => next.run(request).await,
        }
    }

    async fn within(
        self: Arc<Self>,
        owner: Owner,
        id: Box<str>,
        request: Request,
        next: Next,
    ) -> Response {
        {
            let mut table = self.table();
            match table.sessions.get_mut(&id) {
                Some(session) if session.owner == owner => {
                    session.last_seen = Instant::now();
                    session.in_flight += 1;
                }
                // Another principal's session, or none: the same answer.
                _ => return session_not_found(),
            }
        }
        let closing = request.method() == http::Method::DELETE;
        let response = next.run(request).await;
        if closing && response.status().is_success() {
            self.table().sessions.remove(&id);
            // rmcp says 202; the Python SDK takes only 200 or 204 as a
            // closed session, and warns on anything else.
            let (mut parts, body) = response.into_parts();
            parts.status = http::StatusCode::OK;
            return Response::from_parts(parts, body);
        }
        // The request counts as in progress until its response (an SSE
        // stream, possibly long) is finished or dropped.
        let done = InFlight {
            guard: self.clone(),
            id,
        };
        let (parts, body) = response.into_parts();
        let body = body.into_data_stream().map(move |chunk| {
            let _ = &done;
            chunk
        });
        Response::from_parts(parts, axum::body::Body::from_stream(body))
    }

    async fn opening(self: Arc<Self>, owner: Owner, request: Request, next: Next) -> Response {
        if let Err(full) = self.reserve(&owner) {
            return self.refuse(full);
        }
        let starting = Starting {
            guard: self.clone(),
            owner: owner.clone(),
        };
        let response = next.run(request).await;
        let opened = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(Box::<str>::from);
        if let Some(id) = opened {
            self.table().sessions.insert(
                id,
                Session {
                    owner,
                    last_seen: Instant::now(),
                    in_flight: 0,
                },
            );
        }
        drop(starting);
        response
    }

    /// Counts one more session starting for `owner`, after closing idle
    /// ones, or the answer that refuses it.
    fn reserve(&self, owner: &Owner) -> Result<(), Full> {
        let mut table = self.table();
        if table.sessions.len() + table.starting() >= self.max_sessions {
            self.close_idle(&mut table);
        }
        if table.sessions.len() + table.starting() >= self.max_sessions {
            return Err(Full::Server);
        }
        if table.owned_by(owner) >= self.max_per_principal {
            self.close_idle(&mut table);
        }
        if table.owned_by(owner) >= self.max_per_principal {
            return Err(Full::Principal);
        }
        *table.starting.entry(owner.clone()).or_default() += 1;
        Ok(())
    }

    /// The answer to an `initialize` refused for `full`: its status, and
    /// a JSON-RPC error a client can show.
    fn refuse(&self, full: Full) -> Response {
        let (status, message) = match full {
            Full::Server => (
                http::StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "the server has its maximum of {} sessions open; try again later",
                    self.max_sessions
                ),
            ),
            Full::Principal => (
                http::StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "you have the maximum of {} sessions open; close one (HTTP DELETE) first",
                    self.max_per_principal
                ),
            ),
        };
        super::body::jsonrpc_error(status, &crate::mcp::jsonrpc::server_error(message))
    }

    /// Forgets every session idle for longer than the timeout, and has
    /// rmcp close it.
    fn close_idle(&self, table: &mut Table) {
        let now = Instant::now();
        let idle: Vec<Box<str>> = table
            .sessions
            .iter()
            .filter(|(_, s)| s.in_flight == 0 && now - s.last_seen >= self.idle_timeout)
            .map(|(id, _)| id.clone())
            .collect();
        for id in idle {
            table.sessions.remove(&id);
            let manager = self.manager.clone();
            tokio::spawn(async move {
                let id = id.to_string().into();
                // Already gone (rmcp's own idle timer) is fine.
                let _ = manager.close_session(&id).await;
            });
        }
    }
}

/// A session's request in progress, until dropped with its response.
struct InFlight {
    guard: Arc<SessionGuard>,
    id: Box<str>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(session) = self.guard.table().sessions.get_mut(&self.id) {
            session.in_flight = session.in_flight.saturating_sub(1);
            session.last_seen = Instant::now();
        }
    }
}

/// An `initialize` under way, counted against the caps until it ends.
struct Starting {
    guard: Arc<SessionGuard>,
    owner: Owner,
}

impl Drop for Starting {
    fn drop(&mut self) {
        let mut table = self.guard.table();
        if let Some(count) = table.starting.get_mut(&self.owner) {
            *count -= 1;
            if *count == 0 {
                table.starting.remove(&self.owner);
            }
        }
    }
}

/// What rmcp answers for a session it does not know.
fn session_not_found() -> Response {
    (http::StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// Which cap a new session would pass.
#[derive(Debug, PartialEq)]
enum Full {
    Server,
    Principal,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(total: usize, per: usize, idle: Duration) -> Arc<SessionGuard> {
        SessionGuard::new(Arc::new(LocalSessionManager::default()), total, per, idle)
    }

    fn open(guard: &SessionGuard, id: &str, owner: &Owner, ago: Duration) {
        guard.table().sessions.insert(
            id.into(),
            Session {
                owner: owner.clone(),
                last_seen: Instant::now() - ago,
                in_flight: 0,
            },
        );
    }

    #[tokio::test]
    async fn caps_count_sessions_and_starting_ones_and_idle_sessions_make_room() {
        let (ann, bob): (Owner, Owner) = (Arc::from("ann"), Arc::from("bob"));
        let guard = guard(3, 2, Duration::from_secs(60));
        open(&guard, "a1", &ann, Duration::ZERO);
        assert_eq!(guard.reserve(&ann), Ok(()));
        // Ann has one open and one starting: her cap is reached.
        assert_eq!(guard.reserve(&ann), Err(Full::Principal));
        assert!(guard.reserve(&bob).is_ok());
        // Three in all: the server's cap is reached, for anyone.
        assert_eq!(guard.reserve(&bob), Err(Full::Server));
        // Ann's open session goes idle: it is closed to make room.
        guard.table().sessions.get_mut("a1").unwrap().last_seen -= Duration::from_secs(61);
        assert!(guard.reserve(&bob).is_ok());
        assert_eq!(guard.open(), 0);
    }

    #[tokio::test]
    async fn a_session_with_a_request_in_progress_is_not_idle() {
        let ann: Owner = Arc::from("ann");
        let guard = guard(1, 1, Duration::from_secs(1));
        open(&guard, "a1", &ann, Duration::from_secs(5));
        guard.table().sessions.get_mut("a1").unwrap().in_flight = 1;
        assert!(guard.reserve(&ann).is_err());
        assert_eq!(guard.open(), 1);
    }

    #[test]
    fn credentials_are_kept_only_as_a_hash() {
        let mut headers = http::HeaderMap::new();
        assert_eq!(&*credentials_owner(&headers), "anonymous");
        headers.insert(
            http::header::AUTHORIZATION,
            http::HeaderValue::from_static("Bearer s3cret"),
        );
        let owner = credentials_owner(&headers);
        assert!(!owner.contains("s3cret"));
        assert_eq!(owner, credentials_owner(&headers));
    }

    #[test]
    fn one_token_spelt_many_ways_is_one_owner() {
        let owner = |value: &'static str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(
                http::header::AUTHORIZATION,
                http::HeaderValue::from_static(value),
            );
            credentials_owner(&headers)
        };
        let bearer = owner("Bearer s3cret");
        for spelling in ["bearer s3cret", "BEARER   s3cret", "  bEaReR s3cret  "] {
            assert_eq!(owner(spelling), bearer, "{spelling}");
        }
        // The token itself is compared exactly.
        assert_ne!(owner("Bearer S3CRET"), bearer);
        assert_ne!(owner("Bearer s3cret2"), bearer);
    }
}

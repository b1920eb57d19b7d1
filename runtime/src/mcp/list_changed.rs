//! The sessions an MCP server keeps up to date: each hears
//! `notifications/tools/list_changed` when the tools it sees change.
//!
//! A session is tracked from the client's `notifications/initialized`, with
//! its caller's context, and forgotten once its transport has closed or a
//! notification to it failed. A client of the 2026-07-28 protocol, which
//! has no initialization, is tracked for as long as its
//! `subscriptions/listen` request asking for tool list changes is open,
//! and told on that request's stream. One task per server (the watcher) follows the
//! registry's changes: it lets a burst settle, compares what each session
//! sees with what it saw, and tells only the sessions whose tools changed.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{ServerNotification, ToolListChangedNotification};
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use tokio::sync::oneshot;

use super::search::Found;
use super::server::Shared;
use crate::executor::Executor;
use crate::overrides::Override;
use crate::registry::{Changes, View};

/// How long the watcher waits after a change for the rest of its burst:
/// changes this close together are announced once.
const SETTLE: Duration = Duration::from_millis(5);

/// A session that has not taken a notification within this long is
/// forgotten: its client stopped reading.
const SEND_TIMEOUT: Duration = Duration::from_secs(10);

/// Closed sessions are swept when a new one finds the table this much
/// longer than after the last sweep (or at least this long).
const SWEEP_FLOOR: usize = 16;

/// The names of the tools a session sees, in catalog order, each with its
/// override (a new description is a changed list too).
type Names = Arc<[(Box<str>, Option<Override>)]>;

/// The sessions of one server, and its watcher.
pub(super) struct Sessions<C> {
    table: Mutex<Table<C>>,
    /// Set when the first session is tracked. Dropped with the server,
    /// which ends the watcher.
    watcher: OnceLock<oneshot::Sender<()>>,
}

struct Table<C> {
    sessions: Vec<Session<C>>,
    next_id: u64,
    /// How many sessions there were after the last sweep.
    swept: usize,
}

struct Session<C> {
    id: u64,
    to: Listener,
    caller: Arc<C>,
    /// The deferred tools it found, which its list shows too.
    found: Arc<Found>,
    /// What it saw at initialization, or was last told of.
    seen: Names,
}

/// Where a session hears of changes.
#[derive(Clone)]
pub(super) enum Listener {
    /// Its connection, from its `notifications/initialized` on.
    Peer(Peer<RoleServer>),
    /// The stream of its `subscriptions/listen` request (2026-07-28).
    Subscription(SubscriptionSink),
}

impl Listener {
    fn closed(&self) -> bool {
        match self {
            Listener::Peer(peer) => peer.is_transport_closed(),
            // Untracked when its request ends (`Sessions::untrack`).
            Listener::Subscription(_) => false,
        }
    }

    async fn tell(&self) -> bool {
        match self {
            Listener::Peer(peer) => peer.notify_tool_list_changed().await.is_ok(),
            Listener::Subscription(sink) => sink
                .send(ServerNotification::ToolListChangedNotification(
                    ToolListChangedNotification::default(),
                ))
                .await
                .is_ok(),
        }
    }
}

impl<C> Table<C> {
    /// Forgets the sessions whose transport has closed.
    fn sweep(&mut self) {
        self.sessions.retain(|session| !session.to.closed());
        self.swept = self.sessions.len();
    }
}

impl<C: Any + Send + Sync> Sessions<C> {
    pub(super) fn new() -> Self {
        Sessions {
            table: Mutex::new(Table {
                sessions: Vec::new(),
                next_id: 0,
                swept: 0,
            }),
            watcher: OnceLock::new(),
        }
    }

    /// A panic elsewhere while holding the lock left the table whole: each
    /// change to it is one `push` or `retain`.
    fn lock(&self) -> MutexGuard<'_, Table<C>> {
        self.table.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How many sessions would hear of a change now.
    pub(super) fn count(&self) -> usize {
        let mut table = self.lock();
        table.sweep();
        table.sessions.len()
    }

    /// Forgets the session `id` ([`track`](Self::track)'s), if it is still
    /// tracked.
    pub(super) fn untrack(&self, id: u64) {
        self.lock().sessions.retain(|session| session.id != id);
    }

    /// Tells `to` from now on when the tools `caller` sees change, as the
    /// session it answers. Starts the server's watcher if it has none yet
    /// (inside a runtime: rmcp calls this from a session's task).
    pub(super) fn track(
        shared: &Arc<Shared<C>>,
        to: Listener,
        caller: Arc<C>,
        found: Arc<Found>,
    ) -> u64 {
        let sessions = &shared.sessions;
        // Subscribed before `seen` is read: no change falls in between.
        sessions.watcher.get_or_init(|| {
            let (stop, stopped) = oneshot::channel();
            let changes = shared.executor.registry().subscribe();
            tokio::spawn(watch(Arc::downgrade(shared), changes, stopped));
            stop
        });
        let mut table = sessions.lock();
        // Read under the lock: a change either finds this session in the
        // table or was made before `seen` was read.
        let seen = Listing::of(&shared.executor_for(&caller)).seen_by(&found);
        if table.sessions.len() >= (2 * table.swept).max(SWEEP_FLOOR) {
            table.sweep();
        }
        let id = table.next_id;
        table.next_id += 1;
        table.sessions.push(Session {
            id,
            to,
            caller,
            found,
            seen,
        });
        id
    }
}

/// Tells the session that found `found` (a search added to its list),
/// where it hears of every change, if its list changed; whether it was
/// tracked.
pub(super) async fn tell_finder<C: Any + Send + Sync>(
    shared: &Shared<C>,
    found: &Arc<Found>,
) -> bool {
    let (tracked, due) = {
        let mut table = shared.sessions.lock();
        let mut views = Visible::new(shared);
        let mut tracked = false;
        let due: Vec<Listener> = table
            .sessions
            .iter_mut()
            .filter(|session| Arc::ptr_eq(&session.found, found))
            .filter_map(|session| {
                tracked = true;
                let now = views.listing(&session.caller).seen_by(&session.found);
                (now != session.seen).then(|| {
                    session.seen = now;
                    session.to.clone()
                })
            })
            .collect();
        (tracked, due)
    };
    for to in due {
        let _ = tokio::time::timeout(SEND_TIMEOUT, to.tell()).await;
    }
    tracked
}

/// The watcher: until the server is gone, announces each burst of registry
/// changes to the sessions it concerns. A change the subscription missed
/// (`Missed`) is a change like any other: every session is checked again.
async fn watch<C: Any + Send + Sync>(
    server: Weak<Shared<C>>,
    mut changes: Changes,
    mut stopped: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            change = changes.next() => if change.is_none() { return },
        }
        tokio::select! {
            _ = &mut stopped => return,
            () = tokio::time::sleep(SETTLE) => changes.skip_waiting(),
        }
        let Some(shared) = server.upgrade() else {
            return;
        };
        announce(&shared).await;
    }
}

/// Tells every session whose tools changed since it last saw them, and
/// forgets those that cannot be told.
async fn announce<C: Any + Send + Sync>(shared: &Shared<C>) {
    let due: Vec<(u64, Listener)> = {
        let mut table = shared.sessions.lock();
        table.sweep();
        let mut views = Visible::new(shared);
        table
            .sessions
            .iter_mut()
            .filter_map(|session| {
                let now = views.listing(&session.caller).seen_by(&session.found);
                (now != session.seen).then(|| {
                    session.seen = now;
                    (session.id, session.to.clone())
                })
            })
            .collect()
    };
    if due.is_empty() {
        return;
    }
    let sent = futures_util::future::join_all(
        due.iter()
            .map(|(_, to)| tokio::time::timeout(SEND_TIMEOUT, to.tell())),
    )
    .await;
    let mut failed: Vec<u64> = due
        .iter()
        .zip(sent)
        .filter(|(_, sent)| !matches!(sent, Ok(true)))
        .map(|((id, _), _)| *id)
        .collect();
    if !failed.is_empty() {
        failed.sort_unstable();
        shared
            .sessions
            .lock()
            .sessions
            .retain(|session| failed.binary_search(&session.id).is_err());
    }
}

/// The tools `executor` serves now: their names as a session sees them
/// all, and the keys of the deferred ones, which a session sees once it
/// found them.
#[derive(Clone)]
struct Listing {
    all: Names,
    /// Where each deferred tool is in `all`, and its key.
    deferred: Arc<[(usize, Box<str>)]>,
}

impl Listing {
    fn of(executor: &Executor) -> Self {
        let tools = executor.tools();
        let all: Names = tools
            .iter()
            .map(|tool| (tool.name().into(), tool.overridden().cloned()))
            .collect();
        let deferred = tools
            .iter()
            .enumerate()
            .filter(|(_, tool)| tool.deferred())
            .map(|(at, tool)| (at, tool.key().into()))
            .collect();
        Listing { all, deferred }
    }

    /// What a session that found `found` sees: all of it when nothing is
    /// deferred, which costs nothing per session.
    fn seen_by(&self, found: &Found) -> Names {
        if self.deferred.is_empty() {
            return self.all.clone();
        }
        let hidden: Vec<usize> = self
            .deferred
            .iter()
            .filter(|(_, key)| !found.contains(key))
            .map(|(at, _)| *at)
            .collect();
        self.all
            .iter()
            .enumerate()
            .filter(|(at, _)| hidden.binary_search(at).is_err())
            .map(|(_, named)| named.clone())
            .collect()
    }
}

/// What each view sees, read once per announcement however many sessions
/// share it.
struct Visible<'a, C> {
    shared: &'a Shared<C>,
    /// By view (`None`: the server has no views).
    seen: HashMap<Option<u64>, Listing>,
}

impl<'a, C: Any + Send + Sync> Visible<'a, C> {
    fn new(shared: &'a Shared<C>) -> Self {
        Visible {
            shared,
            seen: HashMap::new(),
        }
    }

    fn listing(&mut self, caller: &C) -> Listing {
        let view = self.shared.views.as_ref().map(|view_of| view_of(caller));
        let key = view.as_ref().map(View::id);
        if let Some(listing) = self.seen.get(&key) {
            return listing.clone();
        }
        let listing = match &view {
            Some(view) => Listing::of(&self.shared.executor.view(view.clone())),
            None => Listing::of(&self.shared.executor),
        };
        self.seen.insert(key, listing.clone());
        listing
    }
}

//! Idempotency keys: a write retried with the same key runs once.
//!
//! An agent that loses the answer to a write (a timeout, a dropped
//! connection, a proxy that retries) cannot tell whether it ran. Sent
//! again with the same **idempotency key**, the call does not run twice:
//!
//! - the first call with a key claims it, runs, and records how it ended;
//! - a repeat with the same key, tool, caller and arguments (their
//!   [`Digest`]) returns the recorded result without running, and without
//!   asking for another approval;
//! - a repeat with the same key and another tool or other arguments is
//!   refused ([`Refusal::Conflict`]);
//! - a repeat while the first still runs waits for it, up to
//!   [`IdempotencyBuilder::wait`], then is refused
//!   ([`Refusal::InProgress`]);
//! - a first call that failed, or stopped midway (timed out, panicked,
//!   dropped, its process died), is not run again: the repeat is refused
//!   with [`Refusal::Failed`] or [`Refusal::Unknown`];
//! - keys expire [`IdempotencyBuilder::ttl`] after their first call.
//!
//! Only `write` and `destructive` tools record keys: a read runs again on
//! every call. Keys are optional; an executor without an [`Idempotency`]
//! ignores them. They are per caller when the executor knows who calls
//! ([`ExecutorBuilder::principal`](crate::executor::ExecutorBuilder::principal)):
//! two users' keys never meet. Without it, keys are shared by everyone.
//!
//! **When to send one.** Whenever a write may be retried without knowing
//! whether it ran: by an agent loop that retries on errors, by a client or
//! proxy with a timeout, by replicas behind a load balancer that may send
//! a request twice. A key names one intended change (a UUID the caller
//! makes, or a provider's tool-call id), not a tool or a session.
//!
//! **Where keys arrive.** [`Executor::invoke_idempotent`](crate::Executor::invoke_idempotent);
//! MCP `tools/call` with `_meta: {"idempotencyKey": "..."}`; the REST API's
//! `Idempotency-Key` header.
//!
//! **Where they are kept.** [`MemoryKeys`] here, for one process;
//! `SqliteKeys` and `PostgresKeys` (features `sqlite`, `postgres`): in
//! PostgreSQL, every replica of an application shares them, so a key sent
//! to two replicas runs once.
//!
//! ```
//! use serde_json::json;
//! use toolwright::idempotency::{Idempotency, MemoryKeys, Refusal};
//! use toolwright::{tool, CallError, Catalog, Container, Executor, Invocation};
//! use std::sync::atomic::{AtomicU32, Ordering};
//!
//! static PLACED: AtomicU32 = AtomicU32::new(0);
//!
//! /// Place an order.
//! #[tool(key = "orders.place", effect = write, authorize = public, approve = always)]
//! async fn place(sku: String) -> u32 {
//!     PLACED.fetch_add(1, Ordering::SeqCst) + 1
//! }
//! async fn always(_: &(), _: &Invocation<'_, PlaceArgs>) -> bool { true }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let catalog = Catalog::builder().register::<PlaceArgs>().build().unwrap();
//! let executor = Executor::builder(catalog, Container::default())
//!     .idempotency(Idempotency::new(MemoryKeys::new()))
//!     .build()
//!     .unwrap();
//!
//! let args = json!({"sku": "A-1"});
//! let first = executor.invoke_idempotent("order-42", "place", args.clone(), &()).await;
//! let again = executor.invoke_idempotent("order-42", "place", args, &()).await;
//! assert_eq!((first.unwrap(), again.unwrap()), (json!(1), json!(1)));
//! assert_eq!(PLACED.load(Ordering::SeqCst), 1, "ran once");
//!
//! let other = executor.invoke_idempotent("order-42", "place", json!({"sku": "B-2"}), &()).await;
//! assert!(matches!(other, Err(CallError::NotRepeated { refusal: Refusal::Conflict, .. })));
//! # }
//! ```

mod memory;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use serde_json::Value;

pub use crate::error::Refusal;
use crate::error::{BoxError, CallError};
use crate::request::Digest;
use crate::util::BoxFuture;

pub use memory::MemoryKeys;
#[cfg(feature = "postgres")]
pub use sql::PostgresKeys;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub use sql::SqlKeys;
#[cfg(feature = "sqlite")]
pub use sql::SqliteKeys;

/// How long a key is kept after its first call, unless
/// [`IdempotencyBuilder::ttl`] says otherwise: a day.
pub const DEFAULT_KEY_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a repeat waits for a first call still running, unless
/// [`IdempotencyBuilder::wait`] says otherwise.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(5);

/// Where idempotency keys are claimed and their calls' outcomes kept.
///
/// Each method is atomic on its own, across every process that shares the
/// store: of any number of concurrent [`claim`](Self::claim)s of one key,
/// one gets [`Claimed::Fresh`].
pub trait KeyStore: fmt::Debug + Send + Sync + 'static {
    /// Claims `claim.key` for `claim.actor`: [`Claimed::Fresh`] when no
    /// unexpired claim holds it (an expired one is replaced), otherwise
    /// what the holding claim says: [`Claimed::Conflict`] when its tool or
    /// digest differ, [`Claimed::Running`] until it is finished, then its
    /// [`Recorded`] outcome.
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<Claimed, BoxError>>;

    /// Records how the call of `claim` ended, if `claim` still holds its
    /// key (same token, still running).
    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        outcome: &'a Recorded,
    ) -> BoxFuture<'a, Result<(), BoxError>>;

    /// Gives the key of `claim` back, unclaimed, when its call never
    /// started (it waits for an approval, or was refused): a repeat may
    /// then run. Nothing happens if `claim` no longer holds it.
    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<(), BoxError>>;

    /// Removes every key expired at `now`, and says how many.
    fn purge(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, BoxError>>;
}

/// A call's claim on an idempotency key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Claim {
    /// Who calls (`""` when the executor cannot tell).
    pub actor: String,
    /// The idempotency key the caller sent.
    pub key: String,
    /// The key of the tool called, as served.
    pub tool: String,
    /// The digest of the tool's key and canonical arguments.
    pub digest: Digest,
    /// This claim's own random token: finishing or releasing a key takes
    /// the token that claimed it.
    pub token: String,
    /// When the claim was made.
    pub at: SystemTime,
    /// When the key expires.
    pub expires_at: SystemTime,
}

impl Claim {
    /// A claim of `key` by `actor` for a call of `tool` with arguments of
    /// `digest`, made `at`, expiring `ttl` later, with a fresh token.
    ///
    /// ```
    /// use std::time::{Duration, SystemTime};
    /// use serde_json::json;
    /// use toolwright::approval::Digest;
    /// use toolwright::idempotency::Claim;
    ///
    /// let digest = Digest::of("orders.place", &json!({"sku": "A-1"}));
    /// let now = SystemTime::now();
    /// let one = Claim::new("alice", "order-42", "orders.place", digest, now, Duration::from_secs(60));
    /// let two = Claim::new("alice", "order-42", "orders.place", digest, now, Duration::from_secs(60));
    /// assert_ne!(one.token, two.token);
    /// assert_eq!(one.expires_at, now + Duration::from_secs(60));
    /// ```
    pub fn new(
        actor: impl Into<String>,
        key: impl Into<String>,
        tool: impl Into<String>,
        digest: Digest,
        at: SystemTime,
        ttl: Duration,
    ) -> Self {
        Claim {
            actor: actor.into(),
            key: key.into(),
            tool: tool.into(),
            digest,
            token: token(),
            at,
            expires_at: at.checked_add(ttl).unwrap_or(at),
        }
    }

    /// Whether `tool` and `digest` are this claim's: a repeat of its call.
    pub fn same_call(&self, tool: &str, digest: &Digest) -> bool {
        self.tool == tool && self.digest == *digest
    }
}

/// What [`KeyStore::claim`] found.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Claimed {
    /// The key is this claim's: run the call.
    Fresh,
    /// Another claim holds the key for another tool or other arguments.
    Conflict,
    /// The call holding the key has not finished.
    Running,
    /// The call holding the key ended so.
    Recorded(Recorded),
}

/// How a call with an idempotency key ended, as a repeat is answered.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Recorded {
    /// It returned this result.
    Succeeded(Value),
    /// It failed; the text is what the model was told.
    Failed(String),
    /// It stopped midway: what it changed is unknown.
    Unknown,
}

impl Recorded {
    /// The outcome a call's `result` records.
    fn of(result: &Result<Value, CallError>) -> Self {
        match result {
            Ok(value) => Recorded::Succeeded(value.clone()),
            Err(CallError::Timeout { .. } | CallError::Panicked { .. }) => Recorded::Unknown,
            Err(error) => Recorded::Failed(error.model_message()),
        }
    }

    /// What a repeat answers.
    fn repeated(self) -> Result<Value, Refusal> {
        match self {
            Recorded::Succeeded(value) => Ok(value),
            Recorded::Failed(message) => Err(Refusal::Failed { message }),
            Recorded::Unknown => Err(Refusal::Unknown),
        }
    }
}

/// An executor's idempotency keys: where they are kept, how long, and how
/// long a repeat waits for a call still running
/// ([`ExecutorBuilder::idempotency`](crate::executor::ExecutorBuilder::idempotency)).
///
/// ```
/// use std::time::Duration;
/// use toolwright::idempotency::{Idempotency, MemoryKeys};
///
/// let keys = Idempotency::builder(MemoryKeys::new())
///     .ttl(Duration::from_secs(3600))
///     .wait(Duration::from_secs(2))
///     .build();
/// assert_eq!(keys.ttl(), Duration::from_secs(3600));
/// ```
#[derive(Debug, Clone)]
pub struct Idempotency {
    store: Arc<dyn KeyStore>,
    ttl: Duration,
    wait: Duration,
    /// Claims made, to purge expired keys now and then.
    claims: Arc<AtomicU64>,
}

/// Builds an [`Idempotency`] ([`Idempotency::builder`]).
#[derive(Debug)]
#[must_use]
pub struct IdempotencyBuilder {
    store: Arc<dyn KeyStore>,
    ttl: Duration,
    wait: Duration,
}

impl IdempotencyBuilder {
    /// How long a key is kept after its first call
    /// ([`DEFAULT_KEY_TTL`]: a day). A repeat after that runs again.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How long a repeat waits for a first call still running before it
    /// is refused with [`Refusal::InProgress`] ([`DEFAULT_WAIT`]: 5 s;
    /// zero refuses at once).
    pub fn wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The idempotency keys.
    pub fn build(self) -> Idempotency {
        Idempotency {
            store: self.store,
            ttl: self.ttl,
            wait: self.wait,
            claims: Arc::default(),
        }
    }
}

/// Every this many claims, expired keys are purged.
const PURGE_EVERY: u64 = 1024;

impl Idempotency {
    /// Keys in `store`, with the default time to live and wait.
    pub fn new(store: impl KeyStore) -> Self {
        Idempotency::builder(store).build()
    }

    /// Keys in `store`, configured by the builder.
    pub fn builder(store: impl KeyStore) -> IdempotencyBuilder {
        IdempotencyBuilder {
            store: Arc::new(store),
            ttl: DEFAULT_KEY_TTL,
            wait: DEFAULT_WAIT,
        }
    }

    /// How long a key is kept after its first call.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// How long a repeat waits for a call still running.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// The store the keys are kept in.
    pub fn store(&self) -> &dyn KeyStore {
        &*self.store
    }

    /// Claims `key` for a call of `tool` with arguments of `digest` by
    /// `actor`: the claim to finish when it is the first, or what a repeat
    /// answers (after waiting, up to [`wait`](Self::wait), for a first
    /// call still running).
    pub(crate) async fn claim(
        &self,
        actor: &str,
        key: &str,
        tool: &str,
        digest: Digest,
    ) -> Result<Held, Result<Value, Refusal>> {
        let unavailable = |error| Err(Refusal::Unavailable(error));
        if self.claims.fetch_add(1, Ordering::Relaxed) % PURGE_EVERY == PURGE_EVERY - 1 {
            // Housekeeping: a store that cannot purge can still claim.
            if let Err(error) = self.store.purge(SystemTime::now()).await {
                tracing::warn!(%error, "expired idempotency keys could not be purged");
            }
        }
        let deadline = tokio::time::Instant::now() + self.wait;
        let mut pause = Duration::from_millis(10);
        loop {
            let claim = Claim::new(actor, key, tool, digest, SystemTime::now(), self.ttl);
            match self.store.claim(&claim).await {
                Err(error) => return Err(unavailable(error)),
                Ok(Claimed::Fresh) => {
                    return Ok(Held {
                        store: Arc::clone(&self.store),
                        claim: Some(claim),
                        started: false,
                    });
                }
                Ok(Claimed::Conflict) => return Err(Err(Refusal::Conflict)),
                Ok(Claimed::Recorded(recorded)) => return Err(recorded.repeated()),
                Ok(Claimed::Running) => {}
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Err(Err(Refusal::InProgress));
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(Duration::from_millis(200));
        }
    }
}

/// The idempotency key a call was sent, and the claim on it once made:
/// kept beside the call's surroundings, outside the call's future, which
/// every call pays for, sent a key or not.
pub(crate) struct Keyed<'a> {
    pub(crate) key: &'a str,
    held: Mutex<Option<Held>>,
}

impl<'a> Keyed<'a> {
    pub(crate) fn new(key: &'a str) -> Self {
        Self {
            key,
            held: Mutex::new(None),
        }
    }

    /// Keeps the claim the call made.
    pub(crate) fn hold(&self, held: Held) {
        *self.lock() = Some(held);
    }

    /// Marks that the call's body is about to run (see [`Held::start`]).
    pub(crate) fn start(&self) {
        if let Some(held) = self.lock().as_mut() {
            held.start();
        }
    }

    /// Records the outcome of the call, if it claimed the key.
    pub(crate) async fn finish(&self, result: &Result<Value, CallError>) {
        let held = self.lock().take();
        if let Some(held) = held {
            held.finish(result).await;
        }
    }

    /// Gives the key back, if the call claimed it: it never started.
    pub(crate) async fn release(&self) {
        let held = self.lock().take();
        if let Some(held) = held {
            held.release().await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Held>> {
        // Nothing panics while holding it; a poisoned claim is still one.
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A key a call claimed, until the call records its outcome or gives it
/// back. Dropped with neither (the call's future was dropped), it records
/// the outcome as unknown if the body had started and gives the key back
/// otherwise, on the runtime it was dropped on.
pub(crate) struct Held {
    store: Arc<dyn KeyStore>,
    claim: Option<Claim>,
    started: bool,
}

impl Held {
    /// Marks that the call's body is about to run: from now on, a call
    /// that ends without its outcome has an unknown one.
    pub(crate) fn start(&mut self) {
        self.started = true;
    }

    /// Records the outcome of the call (`result`). A store that fails here
    /// leaves the key claimed until it expires: a repeat is refused as in
    /// progress rather than run twice.
    pub(crate) async fn finish(mut self, result: &Result<Value, CallError>) {
        let Some(claim) = self.claim.take() else {
            return;
        };
        if let Err(error) = self.store.finish(&claim, &Recorded::of(result)).await {
            tracing::warn!(%error, key = %claim.key, "the outcome of a call with an idempotency key could not be recorded");
        }
    }

    /// Gives the key back: the call never started.
    pub(crate) async fn release(mut self) {
        let Some(claim) = self.claim.take() else {
            return;
        };
        if let Err(error) = self.store.release(&claim).await {
            tracing::warn!(%error, key = %claim.key, "an idempotency key could not be given back");
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let Some(claim) = self.claim.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to write on: the key stays claimed until it expires.
            return;
        };
        let (store, started) = (Arc::clone(&self.store), self.started);
        runtime.spawn(async move {
            let done = if started {
                store.finish(&claim, &Recorded::Unknown).await
            } else {
                store.release(&claim).await
            };
            if let Err(error) = done {
                tracing::warn!(%error, key = %claim.key, "a dropped call's idempotency key could not be settled");
            }
        });
    }
}

/// A token no other claim has: random, from the standard library's
/// per-process random keys, a count and the time.
fn token() -> String {
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let count = COUNT.fetch_add(1, Ordering::Relaxed);
    let random = RandomState::new();
    let high = random.hash_one((count, SystemTime::now(), std::process::id()));
    let low = RandomState::new().hash_one((high, count));
    format!("{high:016x}{low:016x}")
}

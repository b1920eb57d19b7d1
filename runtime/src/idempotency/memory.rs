//! Idempotency keys in memory: for one process.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use super::{Claim, Claimed, KeyStore, Recorded};
use crate::error::BoxError;
use crate::request::Digest;
use crate::util::BoxFuture;

/// A [`KeyStore`] in memory: what one process needs. Its keys are lost
/// when the process ends, and replicas do not share them: use
/// `PostgresKeys` where they must.
///
/// Expired keys are dropped as new ones arrive, so it holds about as many
/// keys as arrive within their time to live.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use serde_json::json;
/// use toolwright::approval::Digest;
/// use toolwright::idempotency::{Claim, Claimed, KeyStore, MemoryKeys, Recorded};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let keys = MemoryKeys::new();
/// let digest = Digest::of("orders.place", &json!({"sku": "A-1"}));
/// let ttl = Duration::from_secs(60);
/// let first = Claim::new("ann", "k1", "orders.place", digest, SystemTime::now(), ttl);
/// assert_eq!(keys.claim(&first).await.unwrap(), Claimed::Fresh);
///
/// let repeat = Claim::new("ann", "k1", "orders.place", digest, SystemTime::now(), ttl);
/// assert_eq!(keys.claim(&repeat).await.unwrap(), Claimed::Running);
/// keys.finish(&first, &Recorded::Succeeded(json!(7))).await.unwrap();
/// assert_eq!(keys.claim(&repeat).await.unwrap(), Claimed::Recorded(Recorded::Succeeded(json!(7))));
///
/// // Another caller's key of the same name is another key.
/// let bob = Claim::new("bob", "k1", "orders.place", digest, SystemTime::now(), ttl);
/// assert_eq!(keys.claim(&bob).await.unwrap(), Claimed::Fresh);
/// # }
/// ```
#[derive(Debug, Default)]
pub struct MemoryKeys {
    inner: Mutex<Keys>,
}

/// Every key by caller and key, and when to next drop the expired.
#[derive(Debug, Default)]
struct Keys {
    by_key: HashMap<(String, String), Entry>,
    /// Expired keys are dropped when the map grows past this.
    prune_at: usize,
}

/// A claimed key.
#[derive(Debug)]
struct Entry {
    tool: String,
    digest: Digest,
    token: String,
    /// `None` while its call runs.
    outcome: Option<Recorded>,
    expires_at: SystemTime,
}

/// The fewest keys held before expired ones are looked for.
const PRUNE_FROM: usize = 1024;

impl MemoryKeys {
    /// An empty store.
    pub fn new() -> Self {
        MemoryKeys::default()
    }

    fn keys(&self) -> MutexGuard<'_, Keys> {
        // Every change is one statement: a panic elsewhere leaves no half-made entry.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Keys {
    /// The entry `claim` holds, if it still holds its key.
    fn held(&mut self, claim: &Claim) -> Option<&mut Entry> {
        self.by_key
            .get_mut(&(claim.actor.clone(), claim.key.clone()))
            .filter(|entry| entry.token == claim.token && entry.outcome.is_none())
    }

    /// Drops the keys expired at `now`; how many.
    fn purge(&mut self, now: SystemTime) -> u64 {
        let before = self.by_key.len();
        self.by_key.retain(|_, entry| entry.expires_at > now);
        (before - self.by_key.len()) as u64
    }
}

impl KeyStore for MemoryKeys {
    fn claim<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<Claimed, BoxError>> {
        let mut keys = self.keys();
        if keys.by_key.len() >= keys.prune_at.max(PRUNE_FROM) {
            keys.purge(claim.at);
            keys.prune_at = keys.by_key.len() * 2;
        }
        let id = (claim.actor.clone(), claim.key.clone());
        let claimed = match keys.by_key.get(&id) {
            Some(entry) if entry.expires_at > claim.at => {
                if !claim.same_call(&entry.tool, &entry.digest) {
                    Claimed::Conflict
                } else {
                    match &entry.outcome {
                        None => Claimed::Running,
                        Some(outcome) => Claimed::Recorded(outcome.clone()),
                    }
                }
            }
            _ => {
                let entry = Entry {
                    tool: claim.tool.clone(),
                    digest: claim.digest,
                    token: claim.token.clone(),
                    outcome: None,
                    expires_at: claim.expires_at,
                };
                keys.by_key.insert(id, entry);
                Claimed::Fresh
            }
        };
        Box::pin(async move { Ok(claimed) })
    }

    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        outcome: &'a Recorded,
    ) -> BoxFuture<'a, Result<(), BoxError>> {
        if let Some(entry) = self.keys().held(claim) {
            entry.outcome = Some(outcome.clone());
        }
        Box::pin(async { Ok(()) })
    }

    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, Result<(), BoxError>> {
        let mut keys = self.keys();
        if keys.held(claim).is_some() {
            keys.by_key
                .remove(&(claim.actor.clone(), claim.key.clone()));
        }
        Box::pin(async { Ok(()) })
    }

    fn purge(&self, now: SystemTime) -> BoxFuture<'_, Result<u64, BoxError>> {
        let purged = self.keys().purge(now);
        Box::pin(async move { Ok(purged) })
    }
}

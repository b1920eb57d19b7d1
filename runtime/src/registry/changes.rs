//! Registry changes, announced to subscribers in order.

use serde::Serialize;
use tokio::sync::broadcast;

use crate::disabled::Disabled;

/// One change to a registry: the generation it made, what happened, and the
/// keys of the tools it changed (in key order).
///
/// ```
/// use toolwright::{tool, Catalog, registry::{ChangeKind, Registry, Selector}};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
/// let change = registry.disable(&Selector::All, "maintenance").unwrap();
/// let json = serde_json::to_value(&change).unwrap();
/// assert_eq!(json["generation"], 1);
/// assert_eq!(json["kind"]["disabled"]["reason"], "maintenance");
/// assert_eq!(json["keys"], serde_json::json!(["math.add"]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Change {
    /// The registry's generation after the change.
    pub generation: u64,
    /// What happened.
    pub kind: ChangeKind,
    /// The tools whose state changed. Empty for a policy change, and when
    /// enabling or disabling had nothing to change (then the generation did
    /// not move and no subscriber hears of it).
    pub keys: Vec<String>,
}

/// What a [`Change`] did.
///
/// ```
/// use toolwright::{registry::{ChangeKind, Disabled}};
///
/// fn describe(kind: &ChangeKind) -> String {
///     match kind {
///         ChangeKind::Enabled => "back on".to_owned(),
///         ChangeKind::Disabled(Disabled { reason, .. }) => format!("off: {reason}"),
///         _ => "changed".to_owned(),
///     }
/// }
/// assert_eq!(describe(&ChangeKind::Enabled), "back on");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ChangeKind {
    /// Tools were switched on.
    Enabled,
    /// Tools were switched off, for this reason.
    Disabled(Disabled),
    /// The permission policy was replaced; `keys` is empty, as the policy
    /// may apply to any tool.
    Policy,
    /// Tools were added (registered, mounted or merged), enabled unless they
    /// came disabled from another registry.
    Registered,
    /// Tools were removed.
    Unregistered,
    /// Tools are served under new keys and names (a namespace flattened);
    /// `keys` are the new keys.
    Renamed,
    /// Tools took the state a [`RegistryState`](crate::registry::RegistryState) gave
    /// them, restored by `by` when the restore said who
    /// ([`Registry::restore_by`](crate::registry::Registry::restore_by)).
    Restored {
        /// Who restored the state.
        by: Option<String>,
    },
    /// Tools were given an [`Override`](crate::registry::Override), or taken back to
    /// what they declared.
    Overridden,
    /// Tools took the state another replica of the registry shared
    /// (through `registry::PostgresSync`, feature `postgres`), as it was
    /// written there: who disabled them, and why.
    Synced,
}

/// A subscription to a registry's changes
/// ([`Registry::subscribe`](crate::registry::Registry::subscribe)).
///
/// A subscriber that falls more than a few hundred changes behind misses
/// the oldest and is told how many ([`Missed`]); it can re-read the
/// registry's state, which is always current.
#[derive(Debug)]
pub struct Changes {
    receiver: broadcast::Receiver<Change>,
}

/// Changes a slow subscriber missed.
///
/// ```
/// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
/// let mut changes = registry.subscribe();
/// for i in 0..300 {
///     registry.disable(&Selector::All, format!("reason {i}")).unwrap();
/// }
/// let missed = changes.next().await.unwrap().unwrap_err();
/// assert_eq!(missed.count, 44);
/// // Then the changes it still holds, in order.
/// assert_eq!(changes.next().await.unwrap().unwrap().generation, 45);
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("missed {count} registry changes")]
#[non_exhaustive]
pub struct Missed {
    /// How many changes were dropped before the subscriber read them.
    pub count: u64,
}

impl Changes {
    pub(super) fn new(receiver: broadcast::Receiver<Change>) -> Self {
        Changes { receiver }
    }

    /// The next change; `Err` when some were missed; `None` once every
    /// handle to the registry is gone.
    ///
    /// ```
    /// use toolwright::{Catalog, registry::Registry};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// let mut changes = registry.subscribe();
    /// drop(registry);
    /// assert!(changes.next().await.is_none());
    /// # }
    /// ```
    pub async fn next(&mut self) -> Option<Result<Change, Missed>> {
        match self.receiver.recv().await {
            Ok(change) => Some(Ok(change)),
            Err(broadcast::error::RecvError::Lagged(count)) => Some(Err(Missed { count })),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// Skips every change already waiting, for a reader that re-reads the
    /// registry's state instead of following each change.
    #[cfg_attr(not(any(feature = "mcp", feature = "postgres")), allow(dead_code))]
    pub(crate) fn skip_waiting(&mut self) {
        use broadcast::error::TryRecvError;
        while let Ok(_) | Err(TryRecvError::Lagged(_)) = self.receiver.try_recv() {}
    }
}

//! The live layer over the catalog: what is served now, switched on and off
//! at run time, and narrowed per caller.
//!
//! ```text
//! Registry ── snapshots (generation n) ── Tools (+ View) ── Executor, exports, MCP
//!    │ disable / enable (Selector, Reason)
//!    └─ Changes (subscribe)
//! ```

mod changes;
mod edit;
mod namespace;
mod overrides;
mod policy;
pub(crate) mod search;
mod selector;
mod state;
#[cfg(feature = "postgres")]
mod sync;
mod tools;
mod view;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::SystemTime;

use arc_swap::ArcSwap;
use tokio::sync::broadcast;

pub use crate::catalog::{Catalog, CatalogBuilder, CatalogError, Conflict, ToolEntry};
pub use crate::decision::Decision;
pub use crate::disabled::Disabled;
pub use crate::dynamic::{DynamicTool, DynamicToolBuilder, DynamicToolError, DynamicToolProblem};
pub use crate::dynamic_call::{Arguments, DynamicCall};
pub use crate::overrides::Override;
pub use crate::registration::Registration;
pub use crate::tool::Location;
pub use crate::tool_str::ToolStr;
pub use changes::{Change, ChangeKind, Changes, Missed};
use policy::ToolRuling;
pub use policy::{Policy, Rule};
pub use search::{Hit, SearchIndex};
pub use selector::Selector;
pub use state::{NamespaceState, RegistryState, Restored, ToolState};
#[cfg(feature = "postgres")]
pub use sync::{PostgresSync, SyncError};
pub use tools::Tools;
pub(crate) use tools::{Memo, Snapshot};

/// A snapshot held for one call.
pub(crate) type Current = arc_swap::Guard<Arc<Snapshot>>;
pub use view::View;

/// The tools being served now: a catalog's tools, each switched on or off
/// at run time with a reason.
///
/// Cheap to clone (an `Arc` inside); clones share their state, so an admin
/// task can disable a tool while every front end keeps calling. Readers work
/// on snapshots and never wait for a writer; each change publishes a new
/// snapshot with the next generation number and is announced to
/// [`subscribe`](Self::subscribe)rs.
///
/// A disabled tool is absent from every listing and export, and a call to
/// it is refused with [`CallError::Disabled`](crate::CallError::Disabled):
/// the model is told the tool is unavailable, the application gets the
/// reason.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, registry::{Reason, Selector}};
///
/// /// Look up the weather.
/// #[tool(key = "weather.get", effect = read, authorize = public)]
/// async fn weather(city: String) -> String { format!("sunny in {city}") }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<WeatherArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let registry = executor.registry().clone();
///
/// // The upstream service misbehaves: switch the tool off, no redeploy.
/// registry
///     .disable(&Selector::namespace("weather"), Reason::new("upstream 500s").by("ops"))
///     .unwrap();
/// let refused = executor.invoke("weather", json!({"city": "Oslo"}), &()).await.unwrap_err();
/// assert!(matches!(refused, CallError::Disabled { .. }));
/// assert_eq!(refused.to_string(), "tool `weather.get` is disabled: upstream 500s");
/// assert_eq!(refused.model_message(), "This tool is unavailable.");
///
/// registry.enable(&Selector::name("weather")).unwrap();
/// let answer = executor.invoke("weather", json!({"city": "Oslo"}), &()).await.unwrap();
/// assert_eq!(answer, "sunny in Oslo");
/// assert_eq!(registry.generation(), 2);
/// # }
/// ```
#[derive(Clone)]
pub struct Registry {
    shared: Arc<Shared>,
}

/// A [`Registry`] that may be gone: [`upgrade`](Self::upgrade) gives it
/// back while something else keeps it.
#[cfg(feature = "import-mcp")]
#[derive(Clone, Debug)]
pub(crate) struct WeakRegistry(std::sync::Weak<Shared>);

#[cfg(feature = "import-mcp")]
impl WeakRegistry {
    pub(crate) fn upgrade(&self) -> Option<Registry> {
        self.0.upgrade().map(|shared| Registry { shared })
    }
}

struct Shared {
    current: ArcSwap<Snapshot>,
    /// Writers take turns, so that no change is computed from a stale
    /// snapshot and lost; readers never take it.
    writing: Mutex<()>,
    changes: broadcast::Sender<Change>,
    /// Executors' observers, told of every change as it is published.
    taps: Mutex<Vec<Weak<Tap>>>,
}

/// How an executor's observers hear of a registry's changes.
pub(crate) type Tap = dyn Fn(&Change) + Send + Sync;

/// How many changes a subscriber may fall behind before it misses some.
const CHANGES_BUFFERED: usize = 256;

/// Why (and by whom) tools are being disabled: `"reason"` or
/// `Reason::new("reason").by("who")`.
///
/// ```
/// use toolwright::registry::Reason;
/// let reason = Reason::new("leaks customer names").by("security@example.com");
/// let same: Reason = "leaks customer names".into();
/// assert_ne!(reason, same);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    text: String,
    by: Option<String>,
    detail: Option<serde_json::Value>,
}

impl Reason {
    /// A reason with no author.
    ///
    /// ```
    /// use toolwright::registry::Reason;
    /// let reason = Reason::new("flaky upstream");
    /// # let _ = reason;
    /// ```
    pub fn new(text: impl Into<String>) -> Self {
        Reason {
            text: text.into(),
            by: None,
            detail: None,
        }
    }

    /// Who gave the reason (an operator's id).
    ///
    /// ```
    /// use toolwright::registry::Reason;
    /// let reason = Reason::new("flaky upstream").by("ops");
    /// # let _ = reason;
    /// ```
    pub fn by(mut self, who: impl Into<String>) -> Self {
        self.by = Some(who.into());
        self
    }

    /// What an operator needs to decide on the tool, as JSON: kept as
    /// [`Disabled::detail`] and shown by the admin
    /// API under the tool's `disabled`. Never shown to a model.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, registry::{Reason, Registry, Selector}};
    ///
    /// /// Fetch a page.
    /// #[tool(key = "web.fetch", effect = read, authorize = public)]
    /// async fn fetch(url: String) -> String { url }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<FetchArgs>().build().unwrap());
    /// let reason = Reason::new("upstream failing").detail(json!({"errors_last_hour": 412}));
    /// registry.disable(&Selector::name("fetch"), reason).unwrap();
    /// let disabled = registry.tools().disabled("fetch").cloned().unwrap();
    /// assert_eq!(disabled.detail, Some(json!({"errors_last_hour": 412})));
    /// ```
    pub fn detail(mut self, detail: serde_json::Value) -> Self {
        self.detail = Some(detail);
        self
    }
}

impl From<&str> for Reason {
    fn from(text: &str) -> Self {
        Reason::new(text)
    }
}

impl From<String> for Reason {
    fn from(text: String) -> Self {
        Reason::new(text)
    }
}

/// A registry change that could not be made; the registry is as it was.
///
/// ```
/// use toolwright::{Catalog, registry::{Registry, RegistryError, Selector}};
///
/// let registry = Registry::new(Catalog::builder().build().unwrap());
/// let error = registry.disable(&Selector::tag("pii"), "privacy review").unwrap_err();
/// assert!(matches!(error, RegistryError::NoMatch { .. }));
/// assert_eq!(error.to_string(), "no tool matches `any tag of [pii]`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The selector picks no tool: likely a typo, never a silent no-op.
    #[error("no tool matches `{selector}`")]
    NoMatch {
        /// The selector, as given.
        selector: Selector,
    },
    /// The tools would share a key or a name; each conflict names both.
    #[error(transparent)]
    Conflict(CatalogError),
    /// A namespace must be dot-separated lowercase segments, as keys are.
    #[error(
        "the namespace `{namespace}` is not dot-separated lowercase segments (letters, digits and `_`, each starting with a letter)"
    )]
    InvalidNamespace {
        /// The namespace given.
        namespace: String,
    },
    /// An [`Override`] that would leave a tool unusable.
    #[error("{problem}")]
    InvalidOverride {
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl Registry {
    /// A registry serving every tool of `catalog`, all enabled, at
    /// generation 0. `Executor::new` takes a catalog or a registry.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Container, Executor, registry::Registry};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let executor = Executor::new(registry.clone(), Container::default()).unwrap();
    /// assert_eq!(executor.tools().len(), 1);
    /// ```
    pub fn new(catalog: Catalog) -> Self {
        Registry::from_snapshot(Snapshot::of(catalog, &HashMap::new(), None, 0))
    }

    /// A handle that does not keep the registry alive: what a tool
    /// holds to edit the registry it is registered in.
    #[cfg(feature = "import-mcp")]
    pub(crate) fn downgrade(&self) -> WeakRegistry {
        WeakRegistry(Arc::downgrade(&self.shared))
    }

    /// A registry serving `snapshot` first.
    fn from_snapshot(snapshot: Snapshot) -> Self {
        let (changes, _) = broadcast::channel(CHANGES_BUFFERED);
        Registry {
            shared: Arc::new(Shared {
                current: ArcSwap::from_pointee(snapshot),
                writing: Mutex::new(()),
                changes,
                taps: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The tools served now: the enabled ones when iterated, every one
    /// through [`Tools::with_disabled`].
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Registry};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// assert_eq!(registry.tools().get("add").unwrap().key(), "math.add");
    /// ```
    pub fn tools(&self) -> Tools {
        Tools {
            snapshot: self.snapshot(),
            view: None,
        }
    }

    /// The current generation: 0 at first, one more for every change.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let change = registry.disable(&Selector::All, "maintenance").unwrap();
    /// assert_eq!((change.generation, registry.generation()), (1, 1));
    /// ```
    pub fn generation(&self) -> u64 {
        self.shared.current.load().generation
    }

    /// Whether the tool called `name` is enabled; `None` if there is no such tool.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// assert_eq!(registry.is_enabled("add"), Some(true));
    /// registry.disable(&Selector::name("add"), "maintenance").unwrap();
    /// assert_eq!(registry.is_enabled("add"), Some(false));
    /// assert_eq!(registry.is_enabled("sub"), None);
    /// ```
    pub fn is_enabled(&self, name: &str) -> Option<bool> {
        let snapshot = self.shared.current.load();
        let index = snapshot.catalog.index_of(name)?;
        Some(snapshot.disabled[index].is_none())
    }

    /// Switches off every tool `selector` picks, with `reason`; a tool
    /// already off takes the new reason. Calls that looked a tool up before
    /// this returned still run; every later lookup is refused.
    ///
    /// Fails, changing nothing, when the selector picks no tool.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{ChangeKind, Registry, Selector}};
    ///
    /// /// Delete a file.
    /// #[tool(key = "files.delete", effect = read, authorize = public)]
    /// async fn delete_file(path: String) -> bool { false }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<DeleteFileArgs>().build().unwrap());
    /// let change = registry.disable(&Selector::namespace("files"), "incident 42").unwrap();
    /// assert_eq!(change.keys, ["files.delete"]);
    /// assert!(matches!(change.kind, ChangeKind::Disabled(ref d) if d.reason == "incident 42"));
    /// ```
    pub fn disable(
        &self,
        selector: &Selector,
        reason: impl Into<Reason>,
    ) -> Result<Change, RegistryError> {
        let disabled = switched_off(reason.into());
        let kind = ChangeKind::Disabled((*disabled).clone());
        self.change(selector, kind, Some(disabled))
    }

    /// Switches on every tool `selector` picks. Fails, changing nothing,
    /// when the selector picks no tool; tools already on stay as they are.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// registry.disable(&Selector::All, "maintenance").unwrap();
    /// let change = registry.enable(&Selector::All).unwrap();
    /// assert_eq!(change.keys, ["math.add"]);
    /// // Nothing left to switch on: no change, the same generation.
    /// let again = registry.enable(&Selector::All).unwrap();
    /// assert!(again.keys.is_empty());
    /// assert_eq!(again.generation, change.generation);
    /// ```
    pub fn enable(&self, selector: &Selector) -> Result<Change, RegistryError> {
        self.change(selector, ChangeKind::Enabled, None)
    }

    /// Makes `policy` the permission policy of every call from now on
    /// (replacing any before it), as the next generation.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{ChangeKind, Policy, Registry, Rule}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let change = registry.set_policy(Policy::new().rule(Rule::allow_read_only()));
    /// assert_eq!((change.generation, change.kind), (1, ChangeKind::Policy));
    /// assert_eq!(registry.policy().unwrap().rules()[0].name(), "allow read only");
    /// ```
    pub fn set_policy(&self, policy: Policy) -> Change {
        let policy = Arc::new(policy);
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        let generation = current.generation + 1;
        self.shared.current.store(Arc::new(Snapshot {
            generation,
            catalog: current.catalog.clone(),
            disabled: current.disabled.clone(),
            rulings: ToolRuling::all(Some(&policy), &current.catalog).into(),
            policy: Some(policy),
            memo: Memo::default(),
        }));
        let change = Change {
            generation,
            kind: ChangeKind::Policy,
            keys: Vec::new(),
        };
        self.publish(&change);
        change
    }

    /// The permission policy, if one was set.
    ///
    /// ```
    /// use toolwright::{Catalog, registry::Registry};
    /// assert!(Registry::new(Catalog::builder().build().unwrap()).policy().is_none());
    /// ```
    pub fn policy(&self) -> Option<Arc<Policy>> {
        self.shared.current.load().policy.clone()
    }

    /// Every change from now on, in order.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{ChangeKind, Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let mut changes = registry.subscribe();
    /// registry.disable(&Selector::All, "maintenance").unwrap();
    /// let change = changes.next().await.unwrap().unwrap();
    /// assert_eq!((change.generation, change.keys), (1, vec!["math.add".to_owned()]));
    /// # }
    /// ```
    pub fn subscribe(&self) -> Changes {
        Changes::new(self.shared.changes.subscribe())
    }

    /// Tells `tap` of every change from now on, while it lives elsewhere
    /// (the executor holds it).
    pub(crate) fn tap(&self, tap: &Arc<Tap>) {
        self.taps().push(Arc::downgrade(tap));
    }

    /// Announces `change` to subscribers and taps, dropping dead taps.
    fn publish(&self, change: &Change) {
        _ = self.shared.changes.send(change.clone());
        self.taps().retain(|tap| match tap.upgrade() {
            Some(tap) => {
                tap(change);
                true
            }
            None => false,
        });
    }

    fn taps(&self) -> MutexGuard<'_, Vec<Weak<Tap>>> {
        self.shared
            .taps
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer's turn. A panic elsewhere while holding it left no
    /// half-change: snapshots are only ever replaced whole.
    fn turn(&self) -> MutexGuard<'_, ()> {
        self.shared
            .writing
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.shared.current.load_full()
    }

    /// The current snapshot for one call: cheaper than [`snapshot`](Self::snapshot)
    /// (no shared reference count touched while a thread holds only a few),
    /// and as safe to keep until the call ends. arc-swap advises against
    /// holding it across `.await`s for speed, not safety: past its few
    /// fast slots per thread it costs what an owned `Arc` does.
    pub(crate) fn current(&self) -> Current {
        self.shared.current.load()
    }

    /// Sets every tool `selector` picks to `next` (`None`: enabled), and
    /// publishes the result as the next generation if anything changed.
    fn change(
        &self,
        selector: &Selector,
        kind: ChangeKind,
        next: Option<Arc<Disabled>>,
    ) -> Result<Change, RegistryError> {
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        let picked: Vec<usize> = (0..current.catalog.len())
            .filter(|&i| selector.matches(current.catalog.entry(i)))
            .collect();
        if picked.is_empty() {
            return Err(RegistryError::NoMatch {
                selector: selector.clone(),
            });
        }
        let mut disabled = current.disabled.clone();
        let mut keys = Vec::new();
        for index in picked {
            let changes = match (&disabled[index], &next) {
                (None, None) => false,
                (Some(old), Some(new)) => **old != **new,
                _ => true,
            };
            if changes {
                disabled[index] = next.clone();
                keys.push(current.catalog.entry(index).key().to_owned());
            }
        }
        Ok(self.publish_states(&current, None, disabled, kind, keys))
    }

    /// Publishes `current` with each tool's state from `disabled` (and its
    /// tools replaced one for one by `catalog`'s, same keys in the same
    /// order, when given) as the next generation, and announces it, when
    /// `keys` (the tools that changed) is not empty; otherwise changes
    /// nothing. Called with the writer's turn held.
    pub(crate) fn publish_states(
        &self,
        current: &Snapshot,
        catalog: Option<Catalog>,
        disabled: Box<[Option<Arc<Disabled>>]>,
        kind: ChangeKind,
        keys: Vec<String>,
    ) -> Change {
        let mut generation = current.generation;
        if !keys.is_empty() {
            generation += 1;
            self.shared.current.store(Arc::new(Snapshot {
                generation,
                catalog: catalog.unwrap_or_else(|| current.catalog.clone()),
                disabled,
                policy: current.policy.clone(),
                rulings: current.rulings.clone(),
                memo: Memo::default(),
            }));
        }
        let change = Change {
            generation,
            kind,
            keys,
        };
        if !change.keys.is_empty() {
            self.publish(&change);
        }
        change
    }
}

impl From<Catalog> for Registry {
    fn from(catalog: Catalog) -> Self {
        Registry::new(catalog)
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let snapshot = self.shared.current.load();
        f.debug_struct("Registry")
            .field("generation", &snapshot.generation)
            .field("tools", &snapshot.catalog.len())
            .field(
                "disabled",
                &snapshot.disabled.iter().filter(|d| d.is_some()).count(),
            )
            .finish()
    }
}

/// The state of a tool switched off now for `reason`.
fn switched_off(reason: Reason) -> Arc<Disabled> {
    Arc::new(Disabled {
        reason: reason.text,
        by: reason.by,
        originally_by: None,
        at: SystemTime::now(),
        detail: reason.detail,
    })
}

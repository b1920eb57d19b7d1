//! What a registry serves at one generation, and a caller's share of it.

use std::any::Any;
use std::collections::HashMap;
#[cfg(any(feature = "providers", feature = "mcp"))]
use std::sync::PoisonError;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::View;
use super::policy::{Policy, ToolRuling};
use crate::catalog::{Catalog, ToolEntry};
use crate::disabled::Disabled;
use crate::pipeline::Gate;
use crate::tool_str::ToolStr;

/// One generation of a registry: its tools and which are switched off.
/// Never changed once published; a change publishes a new one.
pub(crate) struct Snapshot {
    pub(crate) generation: u64,
    pub(crate) catalog: Catalog,
    /// Why each tool is off, in catalog order; `None` while it is on.
    pub(crate) disabled: Box<[Option<Arc<Disabled>>]>,
    pub(crate) policy: Option<Arc<Policy>>,
    /// How the policy meets each tool, in catalog order.
    pub(crate) rulings: Arc<[ToolRuling]>,
    /// What was worked out from this generation (views' exports).
    #[cfg_attr(not(any(feature = "providers", feature = "mcp")), allow(dead_code))]
    pub(crate) memo: Memo,
}

/// Values worked out from one generation, kept while it is current: a new
/// generation starts with none. Bounded: past [`MEMO_ENTRIES`], the oldest
/// goes. (Provider exports and the deferred tools' search index use it.)
#[derive(Default)]
#[cfg_attr(not(any(feature = "providers", feature = "mcp")), allow(dead_code))]
pub(crate) struct Memo {
    entries: Mutex<Vec<(MemoKey, Arc<dyn Any + Send + Sync>)>>,
}

/// A view (0: none) and what was worked out for it.
type MemoKey = (u64, u64);

/// How many values one generation keeps: views times formats in use.
#[cfg(any(feature = "providers", feature = "mcp"))]
const MEMO_ENTRIES: usize = 64;

#[cfg(any(feature = "providers", feature = "mcp"))]
impl Memo {
    fn get<T: Any + Send + Sync>(&self, key: MemoKey) -> Option<Arc<T>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (_, value) = entries.iter().find(|(k, _)| *k == key)?;
        value.clone().downcast().ok()
    }

    fn put(&self, key: MemoKey, value: Arc<dyn Any + Send + Sync>) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() == MEMO_ENTRIES {
            entries.remove(0);
        }
        entries.push((key, value));
    }
}

impl Snapshot {
    /// `catalog` at `generation`, each tool disabled as `states` says (by
    /// key; enabled when absent), under `policy`.
    pub(crate) fn of(
        catalog: Catalog,
        states: &HashMap<ToolStr, Arc<Disabled>>,
        policy: Option<Arc<Policy>>,
        generation: u64,
    ) -> Self {
        Snapshot {
            generation,
            disabled: catalog
                .iter()
                .map(|tool| states.get(tool.key()).cloned())
                .collect(),
            rulings: ToolRuling::all(policy.as_ref(), &catalog).into(),
            policy,
            memo: Memo::default(),
            catalog,
        }
    }

    /// How the policy meets calls of the tool at `index`.
    pub(crate) fn gate(&self, index: usize) -> Gate<'_> {
        self.rulings[index].gate(self.policy.as_deref())
    }
}

/// The tools a [`Registry`](crate::registry::Registry) or an
/// [`Executor`](crate::Executor) serves, as of one generation: what to list
/// or export to a caller.
///
/// Iterating gives the enabled tools inside the view (if any), sorted by
/// key; [`Tools::with_disabled`] also gives the disabled ones and why.
/// Serializes as the list of enabled tools' descriptors. A later change to
/// the registry does not change a `Tools` already taken.
///
/// ```
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog, Container, Executor, registry::Selector};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// /// Subtract `b` from `a`.
/// #[tool(key = "math.sub", effect = read, authorize = public)]
/// async fn sub(a: i64, b: i64) -> i64 { a - b }
///
/// let catalog = Catalog::builder().register::<AddArgs>().register::<SubArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// executor.registry().disable(&Selector::name("sub"), "wrong sign").unwrap();
///
/// let tools = executor.tools();
/// let names: Vec<_> = tools.iter().map(|tool| tool.name()).collect();
/// assert_eq!(names, ["add"]);
/// // What a model is offered is what the executor will run.
/// let openai = providers::export(&tools, Format::OpenAiChat { strict: true }).unwrap();
/// assert_eq!(openai.as_array().unwrap().len(), 1);
/// assert_eq!(tools.disabled("sub").unwrap().reason, "wrong sign");
/// ```
#[derive(Clone)]
pub struct Tools {
    pub(crate) snapshot: Arc<Snapshot>,
    pub(crate) view: Option<View>,
}

impl Tools {
    /// The registry generation these tools are from.
    ///
    /// ```
    /// use toolwright::{Catalog, registry::Registry};
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// assert_eq!(registry.tools().generation(), 0);
    /// ```
    pub fn generation(&self) -> u64 {
        self.snapshot.generation
    }

    /// The enabled tools in the view, sorted by key.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Registry};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// for tool in &registry.tools() {
    ///     assert_eq!(tool.key(), "math.add");
    /// }
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = &ToolEntry> + '_ {
        self.indexed().map(|(_, tool)| tool)
    }

    /// Every tool in the view, enabled or not, with why it is disabled.
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
    /// let tools = registry.tools();
    /// let listing: Vec<_> = tools
    ///     .with_disabled()
    ///     .map(|(tool, disabled)| (tool.name(), disabled.map(|d| d.reason.clone())))
    ///     .collect();
    /// assert_eq!(listing, [("add", Some("maintenance".to_owned()))]);
    /// ```
    pub fn with_disabled(&self) -> impl Iterator<Item = (&ToolEntry, Option<&Disabled>)> + '_ {
        self.snapshot
            .catalog
            .iter()
            .zip(&self.snapshot.disabled)
            .filter(|(tool, _)| self.view.as_ref().is_none_or(|view| view.contains(tool)))
            .map(|(tool, disabled)| (tool, disabled.as_deref()))
    }

    /// The enabled tool called `name`, if the view holds it.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// assert!(registry.tools().get("add").is_some());
    /// registry.disable(&Selector::name("add"), "maintenance").unwrap();
    /// assert!(registry.tools().get("add").is_none());
    /// ```
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        let index = self.index_of(name)?;
        self.snapshot.disabled[index]
            .is_none()
            .then(|| self.snapshot.catalog.entry(index))
    }

    /// Why the tool called `name` is disabled; `None` if it is enabled or
    /// not in the view.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Reason, Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// registry.disable(&Selector::name("add"), Reason::new("overflows").by("alice")).unwrap();
    /// let disabled = registry.tools().disabled("add").cloned().unwrap();
    /// assert_eq!((disabled.reason.as_str(), disabled.by.as_deref()), ("overflows", Some("alice")));
    /// ```
    pub fn disabled(&self, name: &str) -> Option<&Disabled> {
        self.snapshot.disabled[self.index_of(name)?].as_deref()
    }

    /// How many enabled tools the view holds.
    ///
    /// ```
    /// use toolwright::{Catalog, registry::Registry};
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// assert_eq!(registry.tools().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether the view holds no enabled tool.
    ///
    /// ```
    /// use toolwright::{Catalog, registry::Registry};
    /// assert!(Registry::new(Catalog::builder().build().unwrap()).tools().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    /// `build(self)`, worked out once per generation and view for each
    /// `what` (a caller's own number for what it builds), then shared.
    #[cfg(any(feature = "providers", feature = "mcp"))]
    pub(crate) fn memoized<T: Any + Send + Sync, E>(
        &self,
        what: u64,
        build: impl FnOnce(&Tools) -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        let key = (self.view.as_ref().map_or(0, View::id), what);
        if let Some(value) = self.snapshot.memo.get(key) {
            return Ok(value);
        }
        // Built outside the lock: two callers may both build it once.
        let value = Arc::new(build(self)?);
        self.snapshot.memo.put(key, value.clone());
        Ok(value)
    }

    /// The search index of the deferred tools in the view, built once per
    /// generation and view, then shared by every search until the
    /// registry changes.
    #[cfg(any(feature = "providers", feature = "mcp"))]
    pub(crate) fn deferred_index(&self) -> Arc<super::SearchIndex> {
        // Not a provider format's number (those count from 0).
        const DEFERRED_INDEX: u64 = u64::MAX;
        let built = self.memoized(DEFERRED_INDEX, |tools| {
            let deferred = tools.iter().filter(|tool| tool.deferred());
            Ok::<_, std::convert::Infallible>(super::SearchIndex::new(deferred))
        });
        match built {
            Ok(index) => index,
            Err(never) => match never {},
        }
    }

    /// The enabled tools in the view, with their places in the catalog.
    pub(crate) fn indexed(&self) -> impl Iterator<Item = (usize, &ToolEntry)> + '_ {
        let catalog = &self.snapshot.catalog;
        (0..catalog.len())
            .filter(|&i| self.snapshot.disabled[i].is_none() && self.in_view(i))
            .map(|i| (i, catalog.entry(i)))
    }

    /// The catalog these tools come from.
    #[cfg(feature = "mcp")]
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.snapshot.catalog
    }

    /// The index of the tool `name` in the snapshot's catalog, if the view
    /// holds it, enabled or not.
    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        let index = self.snapshot.catalog.index_of(name)?;
        self.in_view(index).then_some(index)
    }

    pub(crate) fn in_view(&self, index: usize) -> bool {
        let tool = self.snapshot.catalog.entry(index);
        self.view.as_ref().is_none_or(|view| view.contains(tool))
    }
}

impl<'a> IntoIterator for &'a Tools {
    type Item = &'a ToolEntry;
    type IntoIter = Box<dyn Iterator<Item = &'a ToolEntry> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tools")
            .field("generation", &self.generation())
            .field(
                "enabled",
                &self.iter().map(ToolEntry::name).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Serialize for Tools {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

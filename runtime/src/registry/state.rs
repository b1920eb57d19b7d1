//! A registry's mutable state as data, to keep across restarts or copy to
//! another replica: which tools are switched off and why, what operators
//! overrode, and which namespaces hold which tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::namespace::namespace_of;
use super::{Change, ChangeKind, Registry, RegistryError, Snapshot};
use crate::catalog::Catalog;
use crate::disabled::Disabled;
use crate::overrides::Override;

/// The mutable state of a registry: each tool (by key, namespaces
/// included) enabled or disabled with its reason and its
/// [`Override`], if any, and the tools each namespace holds. Tools
/// themselves, their schemas and hooks are code, and are never part of it;
/// the policy, which may hold code too, is not either. So a namespace is
/// made by code too (a mount): a restore checks that the registry has the
/// namespaces the state lists, and reports those it lacks.
///
/// ```
/// use toolwright::{tool, Catalog, registry::{Registry, RegistryState, Selector}};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let registry = Registry::new(catalog.clone());
/// registry.disable(&Selector::name("add"), "overflows").unwrap();
/// let saved = serde_json::to_string(&registry.state()).unwrap();
///
/// // After a restart, or on another replica:
/// let restarted = Registry::new(catalog);
/// let state: RegistryState = serde_json::from_str(&saved).unwrap();
/// let restored = restarted.restore(&state).unwrap();
/// assert!(restored.unknown.is_empty());
/// assert_eq!(restarted.tools().disabled("add").unwrap().reason, "overflows");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RegistryState {
    /// The generation the state was taken at.
    pub generation: u64,
    /// Each namespace tools are mounted under (`eu`, `crm.eu`; see
    /// [`Registry::mount`]) and their keys; absent when none is.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub namespaces: BTreeMap<String, NamespaceState>,
    /// Every tool by key.
    pub tools: BTreeMap<String, ToolState>,
}

/// One namespace tools are mounted under, in a [`RegistryState`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NamespaceState {
    /// The keys of the tools under it, in key order.
    pub tools: Vec<String>,
}

/// One tool's state in a [`RegistryState`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolState {
    /// Why the tool is switched off; `None` (or absent) while it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<Disabled>,
    /// What an operator overrode; `None` (or absent) when nothing.
    #[serde(rename = "override", default, skip_serializing_if = "Option::is_none")]
    pub overridden: Option<Override>,
}

/// What [`Registry::restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restored {
    /// The change it made (none if every tool already had its state).
    pub change: Change,
    /// Keys in the state that the registry does not serve, left aside.
    pub unknown: Vec<String>,
    /// Namespaces in the state under which the registry serves no tool
    /// (mounts are code: a restore makes none).
    pub unknown_namespaces: Vec<String>,
}

impl Registry {
    /// The registry's mutable state now.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Registry};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let json = serde_json::to_value(registry.state()).unwrap();
    /// assert_eq!(json, serde_json::json!({"generation": 0, "tools": {"math.add": {}}}));
    /// ```
    pub fn state(&self) -> RegistryState {
        let current = self.snapshot();
        let tools = current
            .catalog
            .iter()
            .zip(&current.disabled)
            .map(|(tool, disabled)| {
                let state = ToolState {
                    disabled: disabled.as_deref().cloned(),
                    overridden: tool.overridden().cloned(),
                };
                (tool.key().to_owned(), state)
            })
            .collect();
        RegistryState {
            generation: current.generation,
            namespaces: namespaces(&current.catalog),
            tools,
        }
    }

    /// Gives every tool `state` lists the state it had there (enabled or
    /// disabled with its reason, and its override or none), as one change
    /// (the next generation, if anything changed); tools it does not list
    /// keep theirs. Keys and namespaces it lists that this registry does
    /// not serve are reported, not applied.
    ///
    /// The state's word for who disabled a tool is kept as
    /// [`originally_by`](Disabled::originally_by), with no
    /// [`by`](Disabled::by): use [`restore_by`](Self::restore_by) to say
    /// who restored it.
    ///
    /// Fails, changing nothing, when an override in it would leave a tool
    /// unusable (see [`Registry::set_override`]).
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, RegistryState}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let state: RegistryState = serde_json::from_str(r#"{
    ///     "generation": 9,
    ///     "namespaces": {"eu": {"tools": ["eu.math.add"]}},
    ///     "tools": {
    ///         "math.add": {
    ///             "disabled": {"reason": "audit", "by": null, "at": 0},
    ///             "override": {"description": "Add two whole numbers."}
    ///         },
    ///         "math.sub": {}
    ///     }
    /// }"#).unwrap();
    /// let restored = registry.restore(&state).unwrap();
    /// assert_eq!(restored.unknown, ["math.sub"]);
    /// assert_eq!(restored.unknown_namespaces, ["eu"]);
    /// assert_eq!(registry.is_enabled("add"), Some(false));
    /// registry.enable(&toolwright::registry::Selector::All).unwrap();
    /// assert_eq!(registry.tools().get("add").unwrap().description(), "Add two whole numbers.");
    /// ```
    pub fn restore(&self, state: &RegistryState) -> Result<Restored, RegistryError> {
        self.restore_as(state, None)
    }

    /// [`restore`](Self::restore), done by `by` (an operator): each tool it
    /// disables is disabled [`by`](Disabled::by) `by`, the `by` the state
    /// gives kept as [`originally_by`](Disabled::originally_by), and the
    /// change ([`ChangeKind::Restored`]) names `by`. A state is data: whoever
    /// writes one can put any name in it, so a restore never passes that
    /// name off as the one who acted.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{ChangeKind, Reason, Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let registry = Registry::new(catalog.clone());
    /// registry.disable(&Selector::All, Reason::new("audit").by("alice")).unwrap();
    /// let state = registry.state();
    ///
    /// let replica = Registry::new(catalog);
    /// let restored = replica.restore_by(&state, "bob").unwrap();
    /// assert_eq!(restored.change.kind, ChangeKind::Restored { by: Some("bob".into()) });
    /// let disabled = replica.tools().disabled("add").cloned().unwrap();
    /// assert_eq!(disabled.by.as_deref(), Some("bob"));
    /// assert_eq!(disabled.originally_by.as_deref(), Some("alice"));
    /// ```
    pub fn restore_by(
        &self,
        state: &RegistryState,
        by: impl Into<String>,
    ) -> Result<Restored, RegistryError> {
        self.restore_as(state, Some(by.into()))
    }

    fn restore_as(
        &self,
        state: &RegistryState,
        by: Option<String>,
    ) -> Result<Restored, RegistryError> {
        let problem = state
            .tools
            .values()
            .find_map(|tool| tool.overridden.as_ref()?.problem());
        if let Some(problem) = problem {
            return Err(RegistryError::InvalidOverride { problem });
        }
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        let claimed = |claimed: &Disabled| Disabled {
            by: by.clone(),
            originally_by: claimed.originally_by.clone().or(claimed.by.clone()),
            ..claimed.clone()
        };
        let (catalog, disabled, keys, unknown) = states_set(&current, &state.tools, claimed)?;
        let served = namespaces(&current.catalog);
        let unknown_namespaces = state
            .namespaces
            .keys()
            .filter(|namespace| !served.contains_key(*namespace))
            .cloned()
            .collect();
        let kind = ChangeKind::Restored { by };
        let change = self.publish_states(&current, catalog, disabled, kind, keys);
        Ok(Restored {
            change,
            unknown,
            unknown_namespaces,
        })
    }

    /// Gives the tools `states` names (those served) the states given,
    /// verbatim, as one [`ChangeKind::Synced`] change, if the registry is
    /// still at `generation`; `None`, changing nothing, once it moved on,
    /// so that a change made here meanwhile is never overwritten unseen.
    /// What another replica of the same registry wrote is trusted as it
    /// was written: it already said who acted.
    #[cfg(feature = "postgres")]
    pub(crate) fn apply_synced(
        &self,
        states: &BTreeMap<String, ToolState>,
        generation: u64,
    ) -> Option<Result<Change, RegistryError>> {
        if let Some(problem) = states
            .values()
            .find_map(|tool| tool.overridden.as_ref()?.problem())
        {
            return Some(Err(RegistryError::InvalidOverride { problem }));
        }
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        if current.generation != generation {
            return None;
        }
        let applied = states_set(&current, states, Disabled::clone);
        Some(applied.map(|(catalog, disabled, keys, _)| {
            self.publish_states(&current, catalog, disabled, ChangeKind::Synced, keys)
        }))
    }
}

/// What `current` becomes with each served tool of `states` in the state
/// given there (its `disabled` through `disabled_as`): the new catalog if
/// an override changed, every tool's state, the keys that changed, and
/// the keys `current` does not serve.
type StatesSet = (
    Option<Catalog>,
    Box<[Option<Arc<Disabled>>]>,
    Vec<String>,
    Vec<String>,
);

fn states_set(
    current: &Snapshot,
    states: &BTreeMap<String, ToolState>,
    disabled_as: impl Fn(&Disabled) -> Disabled,
) -> Result<StatesSet, RegistryError> {
    let mut disabled = current.disabled.clone();
    let mut tools: Vec<_> = current.catalog.iter().cloned().collect();
    let mut overridden = false;
    let mut keys = Vec::new();
    let mut unknown = Vec::new();
    for (key, state) in states {
        let Some(index) = current.catalog.index_of_key(key) else {
            unknown.push(key.clone());
            continue;
        };
        let mut changed = false;
        let wanted = state.disabled.as_ref().map(&disabled_as);
        if disabled[index].as_deref() != wanted.as_ref() {
            disabled[index] = wanted.map(Arc::new);
            changed = true;
        }
        let wanted = state.overridden.as_ref().filter(|o| !o.is_empty());
        if tools[index].overridden() != wanted {
            tools[index] = tools[index].with_override(wanted.cloned().map(Arc::new));
            overridden = true;
            changed = true;
        }
        if changed {
            keys.push(key.clone());
        }
    }
    let catalog = match overridden {
        // The same keys and names as before: nothing can conflict.
        true => Some(Catalog::from_entries(tools).map_err(RegistryError::Conflict)?),
        false => None,
    };
    Ok((catalog, disabled, keys, unknown))
}

/// Each namespace of `catalog`'s tools, with its tools' keys.
fn namespaces(catalog: &Catalog) -> BTreeMap<String, NamespaceState> {
    let mut namespaces = BTreeMap::new();
    for tool in catalog {
        if let Some(namespace) = namespace_of(tool) {
            let entry = namespaces
                .entry(namespace.to_owned())
                .or_insert_with(|| NamespaceState { tools: Vec::new() });
            entry.tools.push(tool.key().to_owned());
        }
    }
    namespaces
}

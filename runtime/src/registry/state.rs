//! A registry's mutable state as data, to keep across restarts or copy to
//! another replica: which tools are switched off, and why.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::{Change, ChangeKind, Registry};
use crate::disabled::Disabled;

/// The mutable state of a registry: each tool (by key, namespaces
/// included) enabled or disabled with its reason. Tools themselves, their
/// schemas and hooks are code, and are never part of it; the policy, which
/// may hold code too, is not either.
///
/// ```
/// use toolwright::{tool, Catalog, Registry, RegistryState, Selector};
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
/// let restored = restarted.restore(&state);
/// assert!(restored.unknown.is_empty());
/// assert_eq!(restarted.tools().disabled("add").unwrap().reason, "overflows");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RegistryState {
    /// The generation the state was taken at.
    pub generation: u64,
    /// Every tool by key.
    pub tools: BTreeMap<String, ToolState>,
}

/// One tool's state in a [`RegistryState`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolState {
    /// Why the tool is switched off; `None` (or absent) while it is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disabled: Option<Disabled>,
}

/// What [`Registry::restore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Restored {
    /// The change it made (none if every tool already had its state).
    pub change: Change,
    /// Keys in the state that the registry does not serve, left aside.
    pub unknown: Vec<String>,
}

impl Registry {
    /// The registry's mutable state now.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Registry};
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
        RegistryState {
            generation: current.generation,
            tools: current
                .catalog
                .iter()
                .zip(&current.disabled)
                .map(|(tool, disabled)| {
                    let disabled = disabled.as_deref().cloned();
                    (tool.key().to_owned(), ToolState { disabled })
                })
                .collect(),
        }
    }

    /// Gives every tool `state` lists the state it had there, as one change
    /// (the next generation, if anything changed); tools it does not list
    /// keep theirs. Keys it lists that this registry does not serve are
    /// reported, not applied.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Registry, RegistryState};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let state: RegistryState = serde_json::from_str(r#"{"generation": 9, "tools": {
    ///     "math.add": {"disabled": {"reason": "audit", "by": null, "at": 0}},
    ///     "math.sub": {}
    /// }}"#).unwrap();
    /// let restored = registry.restore(&state);
    /// assert_eq!(restored.unknown, ["math.sub"]);
    /// assert_eq!(registry.is_enabled("add"), Some(false));
    /// ```
    pub fn restore(&self, state: &RegistryState) -> Restored {
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        let mut disabled = current.disabled.clone();
        let mut keys = Vec::new();
        let mut unknown = Vec::new();
        for (key, tool) in &state.tools {
            let Some(index) = current.catalog.index_of_key(key) else {
                unknown.push(key.clone());
                continue;
            };
            if disabled[index].as_deref() != tool.disabled.as_ref() {
                disabled[index] = tool.disabled.clone().map(Arc::new);
                keys.push(key.clone());
            }
        }
        let change = self.publish_states(&current, disabled, ChangeKind::Restored, keys);
        Restored { change, unknown }
    }
}

//! Changes to which tools a registry serves: register and unregister,
//! mount under a namespace, merge, split off, flatten.

use std::collections::HashMap;
use std::sync::Arc;

use super::namespace::{flattened, mounted};
use super::{Change, ChangeKind, Registry, RegistryError, Selector, Snapshot, View};
use crate::catalog::{Catalog, ToolEntry};
use crate::disabled::Disabled;
use crate::dynamic::DynamicTool;
use crate::tool_str::ToolStr;
use crate::util::names::is_valid_key;

/// Each disabled tool's state by key, to carry over to a new tool set.
type States = HashMap<ToolStr, Arc<Disabled>>;

/// A new tool set, its states, and the keys a change is about.
type Edited = (Vec<ToolEntry>, States, Vec<String>);

impl Registry {
    /// Adds a tool built at run time, enabled, as the next generation.
    /// Fails, changing nothing, when its key or name is taken (naming both
    /// tools).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Catalog, Effect, registry::{ChangeKind, DynamicTool, Registry}};
    ///
    /// let ping = || {
    ///     DynamicTool::builder("util.ping", "ping")
    ///         .description("Answer pong.")
    ///         .effect(Effect::Read)
    ///         .input_schema(json!({"type": "object"}))
    ///         .handler(|_| Box::pin(async { Ok(json!("pong")) }))
    ///         .build()
    ///         .unwrap()
    /// };
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// let change = registry.register(ping()).unwrap();
    /// assert_eq!((change.kind, change.keys), (ChangeKind::Registered, vec!["util.ping".to_owned()]));
    /// let again = registry.register(ping()).unwrap_err();
    /// assert!(again.to_string().contains("duplicate tool key `util.ping`"));
    /// ```
    pub fn register(&self, tool: DynamicTool) -> Result<Change, RegistryError> {
        self.add(vec![tool.into_entry()], States::new())
    }

    /// Adds every tool of `tools` as one change (one generation, one
    /// rebuild of the registry's index, where `register` in a loop would
    /// rebuild it for each), or none of them.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Catalog, Effect, registry::{DynamicTool, Registry}};
    ///
    /// // Tools described by configuration, one per entry.
    /// let config = [("ops.restart", "restart"), ("ops.status", "status")];
    /// let tools = config.iter().map(|(key, name)| {
    ///     DynamicTool::builder(*key, *name)
    ///         .description("An operations command.")
    ///         .effect(Effect::Read)
    ///         .input_schema(json!({"type": "object"}))
    ///         .handler(|_| Box::pin(async { Ok(json!("done")) }))
    ///         .build()
    ///         .unwrap()
    /// });
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// let change = registry.register_all(tools).unwrap();
    /// assert_eq!((change.generation, change.keys.len()), (1, 2));
    /// ```
    pub fn register_all(
        &self,
        tools: impl IntoIterator<Item = DynamicTool>,
    ) -> Result<Change, RegistryError> {
        let added = tools.into_iter().map(DynamicTool::into_entry).collect();
        self.add(added, States::new())
    }

    /// [`register_all`](Self::register_all), with the tools whose keys are
    /// in `off` switched off, each for its reason, in the same generation:
    /// no call ever finds them on.
    #[cfg(feature = "import-mcp")]
    pub(crate) fn register_all_off(
        &self,
        tools: Vec<DynamicTool>,
        off: Vec<(String, super::Reason)>,
    ) -> Result<Change, RegistryError> {
        let added: Vec<ToolEntry> = tools.into_iter().map(DynamicTool::into_entry).collect();
        let mut off: HashMap<String, super::Reason> = off.into_iter().collect();
        let states = added
            .iter()
            .filter_map(|tool| {
                let reason = off.remove(tool.key())?;
                Some((tool.served().key.clone(), super::switched_off(reason)))
            })
            .collect();
        self.add(added, states)
    }

    /// Serves `tool` in place of the tool of the same key, switched on, as
    /// one generation: no call finds the key missing in between (an
    /// imported tool built again from a definition a person accepted).
    /// Fails, changing nothing, when no tool has its key or its name is
    /// another tool's.
    #[cfg(feature = "import-mcp")]
    pub(crate) fn replace(&self, tool: DynamicTool) -> Result<Change, RegistryError> {
        let entry = tool.into_entry();
        let key = entry.key().to_owned();
        self.edit(ChangeKind::Registered, |current| {
            if current.catalog.index_of_key(&key).is_none() {
                return Err(RegistryError::NoMatch {
                    selector: super::Selector::key(key.clone()),
                });
            }
            let tools = current
                .catalog
                .iter()
                .map(|tool| match tool.key() == key {
                    true => entry.clone(),
                    false => tool.clone(),
                })
                .collect();
            let mut states = states_of(current);
            states.remove(key.as_str());
            Ok((tools, states, vec![key.clone()]))
        })
    }

    /// Removes every tool `selector` picks, as the next generation. Calls
    /// that found a tool before this returned still run.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// registry.unregister(&Selector::namespace("math")).unwrap();
    /// assert!(registry.tools().is_empty());
    /// assert!(registry.unregister(&Selector::namespace("math")).is_err());
    /// ```
    pub fn unregister(&self, selector: &Selector) -> Result<Change, RegistryError> {
        self.edit(ChangeKind::Unregistered, |current| {
            let keys = picked_keys(&current.catalog, selector)?;
            let tools = current
                .catalog
                .iter()
                .filter(|tool| !selector.matches(tool))
                .cloned()
                .collect();
            Ok((tools, states_of(current), keys))
        })
    }

    /// Serves every tool of `tools` (a catalog, or another registry's tools
    /// and their states as they are now) under `namespace`: key
    /// `namespace.key`, name `namespace_name` within every provider's name
    /// rule (64 characters; a long one keeps its start and gains a short
    /// hash). Fails, changing nothing, on a namespace that is not
    /// dot-separated lowercase segments or a key or name already taken.
    ///
    /// Tools mounted after an executor was built are not checked against its
    /// container: a missing provider fails their calls with
    /// `CallError::DependencyMissing`.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, registry::Registry};
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// let orders = Catalog::builder().register::<GetOrderArgs>().build().unwrap();
    /// registry.mount("eu", orders.clone()).unwrap();
    /// registry.mount("us", orders).unwrap();
    ///
    /// let tools = registry.tools();
    /// let names: Vec<_> = tools.iter().map(|t| (t.key(), t.name())).collect();
    /// assert_eq!(names, [("eu.orders.get", "eu_get_order"), ("us.orders.get", "us_get_order")]);
    ///
    /// let executor = Executor::new(registry, Container::default()).unwrap();
    /// assert_eq!(executor.invoke("us_get_order", json!({"id": 7}), &()).await.unwrap(), 7);
    /// # }
    /// ```
    pub fn mount(
        &self,
        namespace: &str,
        tools: impl Into<Registry>,
    ) -> Result<Change, RegistryError> {
        if !is_valid_key(namespace) {
            return Err(RegistryError::InvalidNamespace {
                namespace: namespace.to_owned(),
            });
        }
        let source = tools.into().snapshot();
        let added: Vec<ToolEntry> = source
            .catalog
            .iter()
            .map(|tool| mounted(tool, namespace))
            .collect();
        let mut added_states = States::new();
        for (index, tool) in added.iter().enumerate() {
            if let Some(disabled) = &source.disabled[index] {
                added_states.insert(tool.served().key.clone(), disabled.clone());
            }
        }
        self.add(added, added_states)
    }

    /// Serves every tool of `other` too, with its state (enabled or
    /// disabled, and why) as it is now. Fails, changing nothing, when a key
    /// or name is taken.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// let math = Registry::new(Catalog::builder().register::<AddArgs>().build().unwrap());
    /// let orders = Registry::new(Catalog::builder().register::<GetOrderArgs>().build().unwrap());
    /// orders.disable(&Selector::All, "migration").unwrap();
    /// math.merge(&orders).unwrap();
    /// assert_eq!(math.is_enabled("add"), Some(true));
    /// assert_eq!(math.is_enabled("get_order"), Some(false));
    /// assert!(math.merge(&orders).is_err(), "already there");
    /// ```
    pub fn merge(&self, other: &Registry) -> Result<Change, RegistryError> {
        let source = other.snapshot();
        self.add(source.catalog.iter().cloned().collect(), states_of(&source))
    }

    /// A new, independent registry of the tools in `view`, with their
    /// states and this registry's policy: a conversation's own toolset,
    /// changed without touching this one.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Effect, registry::{Registry, Selector}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// let registry = Registry::new(
    ///     Catalog::builder().register::<AddArgs>().register::<GetOrderArgs>().build().unwrap(),
    /// );
    /// let math = registry.split(Selector::namespace("math"));
    /// math.disable(&Selector::All, "only for this conversation").unwrap();
    /// assert_eq!(math.tools().with_disabled().count(), 1);
    /// assert_eq!(registry.is_enabled("add"), Some(true), "the original is untouched");
    /// ```
    pub fn split(&self, view: impl Into<View>) -> Registry {
        let view = view.into();
        let current = self.snapshot();
        let (tools, states): (Vec<ToolEntry>, States) = {
            let mut states = States::new();
            let tools = current
                .catalog
                .iter()
                .enumerate()
                .filter(|(_, tool)| view.contains(tool))
                .map(|(index, tool)| {
                    if let Some(disabled) = &current.disabled[index] {
                        states.insert(tool.served().key.clone(), disabled.clone());
                    }
                    tool.clone()
                })
                .collect();
            (tools, states)
        };
        let catalog = Catalog::from_entries(tools)
            .expect("a subset of a registry's tools has no duplicate keys or names");
        Registry::from_snapshot(Snapshot::of(catalog, &states, current.policy.clone(), 0))
    }

    /// Takes `namespace` off the keys (and names) of the tools under it:
    /// `eu.orders.get` / `eu_get_order` is served as `orders.get` /
    /// `get_order` again. Fails, changing nothing, when no tool is under it
    /// or a flattened key or name is taken.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Registry};
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// let registry = Registry::new(Catalog::builder().build().unwrap());
    /// registry.mount("eu", Catalog::builder().register::<GetOrderArgs>().build().unwrap()).unwrap();
    /// registry.flatten("eu").unwrap();
    /// assert_eq!(registry.tools().get("get_order").unwrap().key(), "orders.get");
    /// ```
    pub fn flatten(&self, namespace: &str) -> Result<Change, RegistryError> {
        self.edit(ChangeKind::Renamed, |current| {
            let mut states = States::new();
            let mut keys = Vec::new();
            let tools = current
                .catalog
                .iter()
                .enumerate()
                .map(|(index, tool)| {
                    let tool = match flattened(tool, namespace) {
                        Some(flat) => {
                            keys.push(flat.key().to_owned());
                            flat
                        }
                        None => tool.clone(),
                    };
                    if let Some(disabled) = &current.disabled[index] {
                        states.insert(tool.served().key.clone(), disabled.clone());
                    }
                    tool
                })
                .collect();
            if keys.is_empty() {
                return Err(RegistryError::NoMatch {
                    selector: Selector::namespace(namespace),
                });
            }
            Ok((tools, states, keys))
        })
    }

    /// Adds `added` (with the states in `added_states`) to the tools served.
    fn add(&self, added: Vec<ToolEntry>, added_states: States) -> Result<Change, RegistryError> {
        self.edit(ChangeKind::Registered, |current| {
            let keys = added.iter().map(|tool| tool.key().to_owned()).collect();
            let mut tools: Vec<ToolEntry> = current.catalog.iter().cloned().collect();
            tools.extend(added);
            let mut states = states_of(current);
            states.extend(added_states);
            Ok((tools, states, keys))
        })
    }

    /// Replaces tools one for one with what `next` makes of the current
    /// snapshot's (the same keys and names, in the same order, each keeping
    /// its state) and the keys that changed, as the next generation when
    /// any did; nothing changes if it fails.
    pub(super) fn edit_in_place(
        &self,
        kind: ChangeKind,
        next: impl FnOnce(&Snapshot) -> Result<(Vec<ToolEntry>, Vec<String>), RegistryError>,
    ) -> Result<Change, RegistryError> {
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        let (tools, keys) = next(&current)?;
        let catalog = match keys.is_empty() {
            true => None,
            // The same keys and names as before: nothing can conflict.
            false => Some(Catalog::from_entries(tools).map_err(RegistryError::Conflict)?),
        };
        let disabled = current.disabled.clone();
        Ok(self.publish_states(&current, catalog, disabled, kind, keys))
    }

    /// Replaces the tool set with what `next` makes of the current snapshot
    /// (the tools, each one's state by key, and the keys the change is
    /// about), as the next generation; nothing changes if it fails or the
    /// tools conflict.
    fn edit(
        &self,
        kind: ChangeKind,
        next: impl FnOnce(&Snapshot) -> Result<Edited, RegistryError>,
    ) -> Result<Change, RegistryError> {
        let _turn = self.turn();
        let current = self.shared.current.load_full();
        let (tools, states, keys) = next(&current)?;
        let catalog = Catalog::from_entries(tools).map_err(RegistryError::Conflict)?;
        let generation = current.generation + 1;
        let snapshot = Snapshot::of(catalog, &states, current.policy.clone(), generation);
        self.shared.current.store(Arc::new(snapshot));
        let change = Change {
            generation,
            kind,
            keys,
        };
        self.publish(&change);
        Ok(change)
    }
}

/// The keys of the tools `selector` picks, or the error for none.
fn picked_keys(catalog: &Catalog, selector: &Selector) -> Result<Vec<String>, RegistryError> {
    let keys: Vec<String> = catalog
        .iter()
        .filter(|tool| selector.matches(tool))
        .map(|tool| tool.key().to_owned())
        .collect();
    if keys.is_empty() {
        return Err(RegistryError::NoMatch {
            selector: selector.clone(),
        });
    }
    Ok(keys)
}

/// The disabled tools of `snapshot`, by key.
fn states_of(snapshot: &Snapshot) -> States {
    snapshot
        .catalog
        .iter()
        .zip(&snapshot.disabled)
        .filter_map(|(tool, disabled)| Some((tool.served().key.clone(), disabled.clone()?)))
        .collect()
}

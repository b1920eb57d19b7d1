//! Run-time overrides of what a tool shows and how long its calls may take.

use std::sync::Arc;

use super::{Change, ChangeKind, Registry, RegistryError, Selector};
use crate::catalog::ToolEntry;
use crate::overrides::Override;

impl Registry {
    /// Puts `overrides` in force for every tool `selector` picks, as the
    /// next generation: listings, exports and MCP sessions show the new
    /// title and description (sessions are told their list changed), and
    /// calls that look the tool up from now on run under the new timeout
    /// and result bound. It replaces any override those tools had; an
    /// empty [`Override`] takes them back to what they declared.
    ///
    /// Fails, changing nothing, when the selector picks no tool or the
    /// override has an empty text, a timeout under a millisecond or a zero
    /// result bound.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::{tool, Catalog, registry::{ChangeKind, Override, Registry, Selector}};
    ///
    /// /// Find orders.
    /// #[tool(key = "orders.search", effect = read, authorize = public)]
    /// async fn search_orders(text: String) -> Vec<u64> { Vec::new() }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<SearchOrdersArgs>().build().unwrap());
    /// // Models keep passing names: say what the search takes.
    /// let tuned = Override::new()
    ///     .description("Find orders by order number or customer email; not by name.")
    ///     .timeout(Duration::from_secs(20));
    /// let change = registry.set_override(&Selector::name("search_orders"), tuned).unwrap();
    /// assert_eq!((change.kind, change.keys), (ChangeKind::Overridden, vec!["orders.search".to_owned()]));
    /// let tools = registry.tools();
    /// let tool = tools.get("search_orders").unwrap();
    /// assert!(tool.description().starts_with("Find orders by order number"));
    /// assert_eq!(tool.timeout(), Some(Duration::from_secs(20)));
    ///
    /// // Back to the declared text.
    /// registry.set_override(&Selector::All, Override::new()).unwrap();
    /// assert_eq!(registry.tools().get("search_orders").unwrap().description(), "Find orders.");
    ///
    /// let refused = registry.set_override(&Selector::All, Override::new().max_result(0));
    /// assert!(matches!(refused, Err(toolwright::registry::RegistryError::InvalidOverride { .. })));
    /// ```
    pub fn set_override(
        &self,
        selector: &Selector,
        overrides: Override,
    ) -> Result<Change, RegistryError> {
        if let Some(problem) = overrides.problem() {
            return Err(RegistryError::InvalidOverride { problem });
        }
        let next = (!overrides.is_empty()).then(|| Arc::new(overrides));
        self.override_each(selector, |_| next.clone())
    }

    /// Defers every tool `selector` picks (`true`: left out of a first
    /// tool list, found by a search), or lists them up front (`false`),
    /// whatever they declared, as the next generation: a tag, a namespace
    /// (an imported server's, say), or one tool. The rest of each tool's
    /// override stays; the choice is kept in the registry's
    /// [state](super::RegistryState) as the override's `deferred`.
    /// Deferral saves a model's tokens; it is no permission: a deferred
    /// tool is called like any other.
    ///
    /// Fails, changing nothing, when the selector picks no tool.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Registry, Selector}};
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// /// Export every order of a month as CSV.
    /// #[tool(key = "orders.export", effect = read, authorize = public, tags = ["reports"])]
    /// async fn export_orders(month: u8) -> String { String::new() }
    ///
    /// let registry = Registry::new(
    ///     Catalog::builder().register::<GetOrderArgs>().register::<ExportOrdersArgs>().build().unwrap(),
    /// );
    /// registry.defer(&Selector::tag("reports"), true).unwrap();
    /// let tools = registry.tools();
    /// assert!(tools.get("export_orders").unwrap().deferred());
    /// assert!(!tools.get("get_order").unwrap().deferred());
    /// ```
    pub fn defer(&self, selector: &Selector, deferred: bool) -> Result<Change, RegistryError> {
        self.override_each(selector, |tool| {
            let mut next = tool.overridden().cloned().unwrap_or_default();
            next.deferred = Some(deferred);
            Some(Arc::new(next))
        })
    }

    /// Puts `next(tool)` in force for every tool `selector` picks, as one
    /// generation whose change names the tools whose override it changed.
    fn override_each(
        &self,
        selector: &Selector,
        next: impl Fn(&ToolEntry) -> Option<Arc<Override>>,
    ) -> Result<Change, RegistryError> {
        self.edit_in_place(ChangeKind::Overridden, |current| {
            let mut picked = false;
            let mut keys = Vec::new();
            let tools = current
                .catalog
                .iter()
                .map(|tool| {
                    if !selector.matches(tool) {
                        return tool.clone();
                    }
                    picked = true;
                    let next = next(tool);
                    if tool.overridden() == next.as_deref() {
                        return tool.clone();
                    }
                    keys.push(tool.key().to_owned());
                    tool.with_override(next)
                })
                .collect();
            if !picked {
                return Err(RegistryError::NoMatch {
                    selector: selector.clone(),
                });
            }
            Ok((tools, keys))
        })
    }
}

//! Views: the tools one caller or conversation may see and call.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Selector;
use crate::catalog::ToolEntry;

/// An immutable filter over the tools a registry serves, for one caller or
/// conversation: by [`Selector`], by an application predicate, or both.
///
/// The same view lists and calls. [`Executor::view`](crate::Executor::view)
/// gives an executor that exports, lists and runs only the tools in the
/// view; on every path (`invoke`, `call`, `run_calls`, provider exports,
/// the MCP server) a tool outside it is an unknown tool. Hidden is never
/// merely hidden.
///
/// A view decides what a caller sees; each tool's `authorize` hook still
/// decides what the caller may do.
///
/// ```
/// use toolwright::{tool, Effect, registry::{Selector, View}};
/// # use toolwright::Catalog;
///
/// /// Look up an order.
/// #[tool(key = "orders.get", effect = read, authorize = public)]
/// async fn get_order(id: u64) -> u64 { id }
///
/// let catalog = Catalog::builder().register::<GetOrderArgs>().build().unwrap();
/// let get_order = catalog.get("get_order").unwrap();
///
/// let guests = View::new(Selector::effect(Effect::Read));
/// assert!(guests.contains(get_order));
///
/// // Narrowed again by the application's own rule: both must agree.
/// let short_names = guests.and(View::filter(|tool| tool.name().len() < 5));
/// assert!(!short_names.contains(get_order));
/// ```
#[derive(Clone)]
pub struct View {
    filter: Arc<Filter>,
    /// Told apart from every other view ever made, for what is worked out
    /// per view (exports, what an MCP session sees).
    #[cfg_attr(not(any(feature = "providers", feature = "mcp")), allow(dead_code))]
    id: u64,
}

enum Filter {
    Selector(Selector),
    Predicate(Box<dyn Fn(&ToolEntry) -> bool + Send + Sync>),
    Both(View, View),
}

impl View {
    /// The tools `selector` picks.
    ///
    /// ```
    /// use toolwright::{registry::{Selector, View}};
    /// let support = View::new(Selector::namespace("orders"));
    /// # let _ = support;
    /// ```
    pub fn new(selector: Selector) -> Self {
        View::of(Filter::Selector(selector))
    }

    /// The tools `predicate` accepts: for rules a selector cannot say.
    ///
    /// ```
    /// use toolwright::registry::View;
    /// // Tools that never reach outside the application.
    /// let closed = View::filter(|tool| !tool.open_world());
    /// # let _ = closed;
    /// ```
    pub fn filter(predicate: impl Fn(&ToolEntry) -> bool + Send + Sync + 'static) -> Self {
        View::of(Filter::Predicate(Box::new(predicate)))
    }

    /// The tools both views contain.
    ///
    /// ```
    /// use toolwright::{Effect, registry::{Selector, View}};
    /// let reads = View::new(Selector::effect(Effect::Read));
    /// let read_orders = reads.and(View::new(Selector::namespace("orders")));
    /// # let _ = read_orders;
    /// ```
    pub fn and(&self, other: View) -> Self {
        View::of(Filter::Both(self.clone(), other))
    }

    fn of(filter: Filter) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        View {
            filter: Arc::new(filter),
            id: NEXT.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// This view's number, the same for its clones and never reused.
    #[cfg(any(feature = "providers", feature = "mcp"))]
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Whether `tool` is in the view.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Selector, View}};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// assert!(View::new(Selector::namespace("math")).contains(catalog.get("add").unwrap()));
    /// ```
    pub fn contains(&self, tool: &ToolEntry) -> bool {
        match &*self.filter {
            Filter::Selector(selector) => selector.matches(tool),
            Filter::Predicate(predicate) => predicate(tool),
            Filter::Both(first, second) => first.contains(tool) && second.contains(tool),
        }
    }
}

impl From<Selector> for View {
    fn from(selector: Selector) -> Self {
        View::new(selector)
    }
}

impl fmt::Debug for View {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.filter {
            Filter::Selector(selector) => write!(f, "View({selector})"),
            Filter::Predicate(_) => f.write_str("View(<predicate>)"),
            Filter::Both(first, second) => write!(f, "{first:?} & {second:?}"),
        }
    }
}

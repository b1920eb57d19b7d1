//! How many calls of a tool may run at once.

use std::fmt;
use std::num::NonZeroU32;

/// How many calls of a tool may run at once: `concurrency = N`, `exclusive`,
/// or neither.
///
/// A call waits for its turn after its hooks answered (`authorize`,
/// `approve`, the policy) and before its REQUEST scope opens, and keeps it
/// until the scope is closed (finalizers included). The wait counts toward
/// the tool's timeout, so a stuck call cannot hold its callers forever: a
/// call that times out waiting never ran and gets
/// [`CallError::Timeout`](crate::CallError::Timeout). A call dropped while
/// waiting gives back nothing it did not take. Waiting is first come, first
/// served.
///
/// ```
/// use std::num::NonZeroU32;
/// use toolwright::{tool, Tool, executor::Concurrency};
///
/// /// Render a report on the one rendering server.
/// #[tool(key = "reports.render", effect = read, concurrency = 2, authorize = public)]
/// async fn render_report(month: u32) -> String { format!("report {month}") }
///
/// /// Rebuild the search index, with nothing else running.
/// #[tool(key = "search.reindex", effect = read, exclusive, authorize = public)]
/// async fn reindex() -> bool { true }
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// assert_eq!(RenderReportArgs::CONCURRENCY, Concurrency::Limit(NonZeroU32::new(2).unwrap()));
/// assert_eq!(ReindexArgs::CONCURRENCY, Concurrency::Exclusive);
/// assert_eq!(AddArgs::CONCURRENCY, Concurrency::Unlimited);
/// assert_eq!(RenderReportArgs::CONCURRENCY.to_string(), "at most 2 at once");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Concurrency {
    /// No limit of the tool's own (the default). Its calls still wait for
    /// an [`Exclusive`](Concurrency::Exclusive) call of the same executor.
    Unlimited,
    /// `concurrency = N`: at most N calls of the tool at once. The limit is
    /// the tool's catalog entry's: calls through every executor, view and
    /// front end over the same [`Catalog`](crate::Catalog) (or its clones)
    /// count together.
    Limit(NonZeroU32),
    /// `exclusive`: the call runs alone. It waits until no other call of
    /// the same executor (its clones and views included) is past its hooks,
    /// and none gets past them until it is done. Calls that arrive while it
    /// waits queue behind it, so it is not starved.
    ///
    /// A tool body that calls its own executor again (directly or through
    /// a front end) must not be `exclusive`, and must not run beside one:
    /// the inner call would wait for the outer one to finish. Give such
    /// tools a timeout.
    Exclusive,
}

impl fmt::Display for Concurrency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Concurrency::Unlimited => f.write_str("unlimited"),
            Concurrency::Limit(n) => write!(f, "at most {n} at once"),
            Concurrency::Exclusive => f.write_str("exclusive"),
        }
    }
}

//! Why an executor could not be built: every problem at once.

use crate::tool::Location;
use crate::tool_str::ToolStr;

/// One reason the executor could not be built.
///
/// ```
/// use toolwright::{tool, Catalog, Container, Executor, Inject, executor::ExecutorProblem};
///
/// trait Mailer: Send + Sync {}
///
/// /// Check that the mail server answers.
/// #[tool(key = "mail.status", effect = read, authorize = public)]
/// async fn mail_status(_mailer: Inject<dyn Mailer>) -> bool { true }
///
/// let catalog = Catalog::builder().register::<MailStatusArgs>().build().unwrap();
/// let error = Executor::new(catalog, Container::default()).unwrap_err();
/// match &error.problems[..] {
///     [ExecutorProblem::MissingProvider { tool, type_name, .. }] => {
///         assert_eq!(*tool, "mail.status");
///         assert!(type_name.ends_with("Mailer"));
///     }
///     other => panic!("unexpected problems: {other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorProblem {
    /// A tool injects a type that no APP value or REQUEST provider gives.
    #[error(
        "tool `{tool}` at {location} injects `{type_name}`, but the container provides no `{type_name}`"
    )]
    MissingProvider {
        /// The tool's key.
        tool: ToolStr,
        /// Where the tool was declared.
        location: Location,
        /// The type nothing provides.
        type_name: &'static str,
    },
    /// A tool's input schema does not compile (a bad `pattern`, say).
    #[error("the input schema of tool `{tool}` at {location} does not compile: {message}")]
    InvalidSchema {
        /// The tool's key.
        tool: ToolStr,
        /// Where the tool was declared.
        location: Location,
        /// The schema compiler's message.
        message: String,
    },
    /// The observers' dispatcher thread could not be started.
    #[error("the observers' dispatcher thread could not be started: {message}")]
    ObserverThread {
        /// The operating system's message.
        message: String,
    },
}

/// The executor could not be built: every problem found, in catalog order.
///
/// ```
/// use toolwright::{tool, Catalog, Container, Executor, Inject, executor::ExecutorProblem};
///
/// struct Db;
///
/// /// Count the orders.
/// #[tool(key = "orders.count", effect = read, authorize = public)]
/// async fn count_orders(_db: Inject<Db>) -> u64 { 0 }
///
/// /// Find products by code.
/// #[tool(key = "products.find", effect = read, authorize = public)]
/// async fn find_products(
///     #[schemars(regex(pattern = "[A-Z"))]
///     code: String,
/// ) -> Vec<u64> {
///     Vec::new()
/// }
///
/// let catalog = Catalog::builder()
///     .register::<CountOrdersArgs>()
///     .register::<FindProductsArgs>()
///     .build()
///     .unwrap();
/// let error = Executor::new(catalog, Container::default()).unwrap_err();
/// // Every problem at once, so that one start-up shows everything to fix.
/// assert!(matches!(
///     &error.problems[..],
///     [
///         ExecutorProblem::MissingProvider { tool: missing, .. },
///         ExecutorProblem::InvalidSchema { tool: invalid, .. },
///     ] if missing == "orders.count" && invalid == "products.find"
/// ));
/// let message = error.to_string();
/// assert!(message.starts_with("tool `orders.count` at "));
/// assert!(message.contains("; the input schema of tool `products.find` at "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", crate::util::Joined(.problems))]
pub struct ExecutorError {
    /// Every problem.
    pub problems: Vec<ExecutorProblem>,
}

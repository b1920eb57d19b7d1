//! An explicit list of tools, built into a catalog.

use super::{Catalog, CatalogError};
use crate::registration::Registration;
use crate::tool::Tool;

/// Builds a [`Catalog`] from an explicit list of tools.
///
/// For tests, for serving a chosen subset of the linked tools, and for
/// platforms without link-time collection. A tool registered twice is one
/// tool.
///
/// ```
/// use toolwright::{tool, Catalog};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// /// Negate a number.
/// #[tool(key = "math.negate", effect = read, authorize = public)]
/// async fn negate(a: i64) -> i64 { -a }
///
/// let catalog = Catalog::builder()
///     .register::<AddArgs>()
///     .register::<NegateArgs>()
///     .register::<AddArgs>()
///     .build()
///     .unwrap();
/// assert_eq!(catalog.len(), 2);
/// ```
#[derive(Debug, Default)]
pub struct CatalogBuilder {
    registrations: Vec<Registration>,
}

impl CatalogBuilder {
    /// Adds tool `T` (the `...Args` struct `#[tool]` generated).
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// assert_eq!(catalog.get("add").unwrap().key(), "math.add");
    /// ```
    pub fn register<T: Tool>(mut self) -> Self {
        self.registrations.push(Registration::of::<T>());
        self
    }

    /// Adds a registration, such as one chosen at run time from a list.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Registration};
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// static TOOLS: [Registration; 2] = [
    ///     Registration::of::<GetOrderArgs>(),
    ///     Registration::of::<GetProductArgs>(),
    /// ];
    ///
    /// // Only the order tools, say for a support assistant.
    /// let catalog = TOOLS
    ///     .iter()
    ///     .filter(|tool| tool.key().starts_with("orders."))
    ///     .fold(Catalog::builder(), |builder, tool| builder.add_registration(*tool))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(catalog.len(), 1);
    /// assert!(catalog.get("get_order").is_some());
    /// ```
    pub fn add_registration(mut self, registration: Registration) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Sorts by key and checks for duplicate keys and names.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::Conflict};
    ///
    /// /// Search products.
    /// #[tool(key = "products.search", name = "search", effect = read, authorize = public)]
    /// async fn search_products(query: String) -> Vec<u64> { Vec::new() }
    ///
    /// /// Search orders.
    /// #[tool(key = "orders.search", name = "search", effect = read, authorize = public)]
    /// async fn search_orders(query: String) -> Vec<u64> { Vec::new() }
    ///
    /// let error = Catalog::builder()
    ///     .register::<SearchProductsArgs>()
    ///     .register::<SearchOrdersArgs>()
    ///     .build()
    ///     .unwrap_err();
    /// assert!(matches!(error.conflicts(), [Conflict::Name { name, .. }] if name == "search"));
    /// ```
    pub fn build(self) -> Result<Catalog, CatalogError> {
        Catalog::from_registrations(self.registrations.iter().collect())
    }
}

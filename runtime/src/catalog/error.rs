//! Why a catalog could not be built: the keys and names two tools claim.

use crate::tool::Location;
use crate::tool_str::ToolStr;

/// Two tools claim the same key or name.
///
/// `first` and `second` are the two declarations in catalog order (by key,
/// then name, then file and line), which need not be the order of the source.
///
/// ```
/// use toolwright::{tool, Catalog, registry::Conflict};
///
/// /// Look up a product.
/// #[tool(key = "products.get", effect = read, authorize = public)]
/// async fn get_product(id: u64) -> u64 { id }
///
/// /// Find a product (by mistake, under the same key).
/// #[tool(key = "products.get", effect = read, authorize = public)]
/// async fn find_product(id: u64) -> u64 { id }
///
/// let error = Catalog::builder()
///     .register::<GetProductArgs>()
///     .register::<FindProductArgs>()
///     .build()
///     .unwrap_err();
/// match error.conflicts() {
///     [Conflict::Key { key, first, second, .. }] => {
///         assert_eq!(*key, "products.get");
///         // Both declarations, to point the developer at each.
///         assert_ne!(first.line, second.line);
///     }
///     other => panic!("unexpected conflicts: {other:?}"),
/// }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Conflict {
    /// Two tools share a key.
    #[error(
        "duplicate tool key `{key}`: `{first_name}` declared at {first} and `{second_name}` at {second}"
    )]
    Key {
        /// The shared key.
        key: ToolStr,
        /// The declaration that comes first in catalog order.
        first: Location,
        /// The other declaration.
        second: Location,
        /// The name of the first tool.
        first_name: ToolStr,
        /// The name of the other tool.
        second_name: ToolStr,
    },
    /// Two tools share a name: named by their keys too, since a tool built
    /// at run time (an imported one, say) is declared where it was built.
    #[error(
        "duplicate tool name `{name}`: `{first_key}` declared at {first} and `{second_key}` at {second}"
    )]
    Name {
        /// The shared name.
        name: ToolStr,
        /// The declaration that comes first in catalog order.
        first: Location,
        /// The other declaration.
        second: Location,
        /// The key of the first tool.
        first_key: ToolStr,
        /// The key of the other tool.
        second_key: ToolStr,
    },
}

/// The catalog could not be built: every conflict found, in key order, or
/// nothing to build it from.
///
/// ```
/// use toolwright::{tool, Catalog, registry::Conflict};
///
/// /// Search products (old version).
/// #[tool(key = "products.search", name = "search", effect = read, authorize = public)]
/// async fn search_v1(query: String) -> Vec<u64> { Vec::new() }
///
/// /// Search products.
/// #[tool(key = "products.search", name = "search", effect = read, authorize = public)]
/// async fn search_v2(query: String) -> Vec<u64> { Vec::new() }
///
/// let error = Catalog::builder()
///     .register::<SearchV1Args>()
///     .register::<SearchV2Args>()
///     .build()
///     .unwrap_err();
/// // Every conflict at once, so that one build shows everything to fix.
/// assert!(matches!(
///     error.conflicts(),
///     [Conflict::Key { key, .. }, Conflict::Name { name, .. }]
///         if key == "products.search" && name == "search"
/// ));
/// let message = error.to_string();
/// assert!(message.starts_with("duplicate tool key `products.search`: `search` declared at "));
/// assert!(message.contains("; duplicate tool name `search`: `products.search` declared at "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// Tools claim the same key or name: every duplicate key and name.
    #[error("{}", crate::util::Joined(.conflicts))]
    Conflicts {
        /// Every duplicate key and name, in key order.
        conflicts: Vec<Conflict>,
    },
    /// [`Catalog::discover`](crate::Catalog::discover) found no tool at all:
    /// most often the crate that declares them is not linked (see the
    /// catalog's *Linking* section). An application that means to start
    /// with no tool says so with [`Catalog::empty`](crate::Catalog::empty).
    #[error(
        "no tool is linked into this binary: a crate of tools that nothing references is not \
         linked (add `use my_tools as _;`), or use `Catalog::empty()` to start with none"
    )]
    NothingLinked,
}

impl CatalogError {
    /// The duplicate keys and names, if that is what failed; none otherwise.
    ///
    /// ```
    /// let error = toolwright::CatalogError::NothingLinked;
    /// assert!(error.conflicts().is_empty());
    /// ```
    pub fn conflicts(&self) -> &[Conflict] {
        match self {
            CatalogError::Conflicts { conflicts } => conflicts,
            CatalogError::NothingLinked => &[],
        }
    }
}

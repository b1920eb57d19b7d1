//! The catalog itself: its tools sorted by key, looked up by name, key or
//! type, and discovered from what is linked into the binary.

use std::any::TypeId;
use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use super::{CatalogBuilder, CatalogError, Conflict, ToolEntry};
use crate::concurrency::Concurrency;
use crate::registration::Registration;
use crate::tool::Tool;
use crate::util::hash::{KeyMap, Name, NameMap};

/// An immutable, cheaply cloned set of tools with their schemas.
///
/// Build it once at start-up with [`Catalog::discover`] (every `#[tool]`
/// linked into the binary), [`Catalog::discover_in`] (only some modules), or
/// [`Catalog::builder`] (an explicit list).
///
/// # Linking
///
/// Registrations are collected at link time. A crate of tools that nothing
/// in the binary references is not linked, and its tools are silently
/// absent; reference it with `use my_tools as _;`.
///
/// ```standalone_crate
/// use toolwright::{tool, Catalog};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let catalog = Catalog::discover().unwrap();
/// let add = catalog.get("add").unwrap();
/// assert_eq!(add.key(), "math.add");
/// assert_eq!(add.input_schema()["required"], serde_json::json!(["a", "b"]));
/// ```
#[derive(Clone)]
pub struct Catalog {
    inner: Arc<CatalogInner>,
}

struct CatalogInner {
    entries: Vec<ToolEntry>,
    /// Whether a tool is `exclusive`: then every call takes a pass of the
    /// executor's gate.
    has_exclusive: bool,
    by_name: NameMap<usize>,
    by_type: KeyMap<TypeId, usize>,
}

impl Catalog {
    /// Every tool linked into the binary, sorted by key.
    ///
    /// Fails naming both declarations of any duplicate key or name, and
    /// with [`CatalogError::NothingLinked`] when no tool is linked at all
    /// (see [*Linking*](Catalog#linking)); [`Catalog::empty`] starts empty
    /// on purpose.
    ///
    /// ```standalone_crate
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Subtract `b` from `a`.
    /// #[tool(key = "math.sub", effect = read, authorize = public)]
    /// async fn sub(a: i64, b: i64) -> i64 { a - b }
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::discover().unwrap();
    /// let keys: Vec<_> = catalog.iter().map(|tool| tool.key()).collect();
    /// assert_eq!(keys, ["math.add", "math.sub"]);
    /// ```
    pub fn discover() -> Result<Catalog, CatalogError> {
        let registrations: Vec<&Registration> = inventory::iter::<Registration>().collect();
        if registrations.is_empty() {
            return Err(CatalogError::NothingLinked);
        }
        Self::from_registrations(registrations)
    }

    /// A catalog with no tool, for an application that adds its tools at
    /// run time (dynamic tools, imports) rather than declaring them.
    ///
    /// ```
    /// let catalog = toolwright::Catalog::empty();
    /// assert!(catalog.is_empty());
    /// ```
    pub fn empty() -> Catalog {
        Catalog {
            inner: Arc::new(CatalogInner {
                entries: Vec::new(),
                has_exclusive: false,
                by_name: NameMap::default(),
                by_type: KeyMap::default(),
            }),
        }
    }

    /// The linked tools declared in the given modules (or their submodules),
    /// sorted by key: `Catalog::discover_in(["shop::products", "shop::orders"])`.
    ///
    /// ```
    /// use toolwright::Catalog;
    ///
    /// mod products {
    ///     use toolwright::tool;
    ///
    ///     /// Look up a product.
    ///     #[tool(key = "products.get", effect = read, authorize = public)]
    ///     pub async fn get_product(id: u64) -> u64 { id }
    /// }
    ///
    /// mod orders {
    ///     use toolwright::tool;
    ///
    ///     /// Look up an order.
    ///     #[tool(key = "orders.get", effect = read, authorize = public)]
    ///     pub async fn get_order(id: u64) -> u64 { id }
    /// }
    ///
    /// // In a crate `shop`, this is `Catalog::discover_in(["shop::products"])`.
    /// let products = Catalog::discover_in([format!("{}::products", module_path!())]).unwrap();
    /// let keys: Vec<_> = products.iter().map(|tool| tool.key()).collect();
    /// assert_eq!(keys, ["products.get"]);
    ///
    /// assert!(Catalog::discover_in(["no_such_module"]).unwrap().is_empty());
    /// ```
    pub fn discover_in<I, S>(prefixes: I) -> Result<Catalog, CatalogError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let prefixes: Vec<S> = prefixes.into_iter().collect();
        Self::from_registrations(
            inventory::iter::<Registration>()
                .filter(|r| {
                    prefixes
                        .iter()
                        .any(|p| in_module(r.location.module_path, p.as_ref()))
                })
                .collect(),
        )
    }

    /// An explicit list, for tests and platforms without link-time collection.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Echo a word.
    /// #[tool(key = "demo.echo", effect = read, authorize = public)]
    /// async fn echo(word: String) -> String { word }
    ///
    /// let catalog = Catalog::builder().register::<EchoArgs>().build().unwrap();
    /// assert_eq!(catalog.len(), 1);
    /// ```
    pub fn builder() -> CatalogBuilder {
        CatalogBuilder::default()
    }

    /// A catalog of `registrations`, sorted and deduplicated by reference:
    /// a registration is a few hundred bytes, and 10,000 of them moved
    /// about by a sort were most of discovering them.
    pub(super) fn from_registrations(
        mut registrations: Vec<&Registration>,
    ) -> Result<Catalog, CatalogError> {
        // The same registration twice (linked once, registered again) is one tool.
        registrations.sort_by_key(|r| (r.key, r.location.file, r.location.line));
        registrations.dedup_by(|a, b| a.location == b.location && a.key == b.key);
        Self::from_entries(
            registrations
                .into_iter()
                .copied()
                .map(ToolEntry::new)
                .collect(),
        )
    }

    /// A catalog of `entries`, sorted by key; fails naming both tools of
    /// every duplicate key or name.
    pub(crate) fn from_entries(mut entries: Vec<ToolEntry>) -> Result<Catalog, CatalogError> {
        entries.sort_by(|a, b| {
            let order = |e: &ToolEntry| (e.location().file, e.location().line);
            (a.key(), a.name(), order(a)).cmp(&(b.key(), b.name(), order(b)))
        });
        let mut conflicts = Vec::new();
        let mut by_name: NameMap<usize> = NameMap::default();
        let mut by_type: KeyMap<TypeId, usize> = KeyMap::default();
        for (index, entry) in entries.iter().enumerate() {
            let (served, location) = (entry.served(), entry.location());
            // Sorted by key: a tool with the key of another follows it.
            if let Some(before) = index.checked_sub(1).map(|i| &entries[i])
                && before.key() == entry.key()
            {
                conflicts.push(Conflict::Key {
                    key: served.key.clone(),
                    first: before.location(),
                    second: location,
                    first_name: before.served().name.clone(),
                    second_name: served.name.clone(),
                });
            }
            if let Some(&first) = by_name.get(&Name(&served.name)) {
                conflicts.push(Conflict::Name {
                    name: served.name.clone(),
                    first: entries[first].location(),
                    second: location,
                    first_key: entries[first].served().key.clone(),
                    second_key: served.key.clone(),
                });
            } else {
                by_name.insert(served.name.clone(), index);
            }
            if let Some(type_id) = entry.type_id() {
                // A type served under several names: typed calls run the first.
                by_type.entry(type_id).or_insert(index);
            }
        }
        if !conflicts.is_empty() {
            return Err(CatalogError::Conflicts { conflicts });
        }
        let has_exclusive = entries
            .iter()
            .any(|entry| entry.concurrency() == Concurrency::Exclusive);
        Ok(Catalog {
            inner: Arc::new(CatalogInner {
                has_exclusive,
                entries,
                by_name,
                by_type,
            }),
        })
    }

    /// The tool called `name`, in O(1).
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// // The tool a model asked for, to show it or check its effect.
    /// assert_eq!(catalog.get("add").unwrap().key(), "math.add");
    /// assert!(catalog.get("math.add").is_none(), "looked up by name, not by key");
    /// ```
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.index_of(name).map(|i| &self.inner.entries[i])
    }

    /// The tool whose key is `key`.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Tool};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", name = "sum", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// assert_eq!(catalog.get_by_key("math.add").unwrap().name(), "sum");
    /// assert_eq!(catalog.get_by_key(AddArgs::KEY).unwrap().name(), AddArgs::NAME);
    /// assert!(catalog.get_by_key("sum").is_none());
    /// ```
    pub fn get_by_key(&self, key: &str) -> Option<&ToolEntry> {
        self.index_of_key(key).map(|i| &self.inner.entries[i])
    }

    /// Every tool, sorted by key; `for tool in &catalog` does the same.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Subtract `b` from `a`.
    /// #[tool(key = "math.sub", effect = read, authorize = public)]
    /// async fn sub(a: i64, b: i64) -> i64 { a - b }
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<SubArgs>()
    ///     .register::<AddArgs>()
    ///     .build()
    ///     .unwrap();
    /// // The list of tools a prompt offers a model.
    /// let listing: Vec<_> = catalog
    ///     .iter()
    ///     .map(|tool| format!("{}: {}", tool.name(), tool.description()))
    ///     .collect();
    /// assert_eq!(listing, ["add: Add two numbers.", "sub: Subtract `b` from `a`."]);
    ///
    /// for tool in &catalog {
    ///     assert_eq!(tool.input_schema()["type"], "object");
    /// }
    /// ```
    pub fn iter(&self) -> std::slice::Iter<'_, ToolEntry> {
        self.inner.entries.iter()
    }

    /// How many tools.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// assert_eq!(catalog.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    /// Whether there are no tools.
    ///
    /// ```
    /// use toolwright::Catalog;
    ///
    /// // A filter that matched nothing, worth a warning at start-up.
    /// let catalog = Catalog::discover_in(["shop::retired"]).unwrap();
    /// assert!(catalog.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.inner.by_name.get(&Name(name)).copied()
    }

    pub(crate) fn index_of_type<T: Tool>(&self) -> Option<usize> {
        self.inner.by_type.get(&TypeId::of::<T>()).copied()
    }

    pub(crate) fn entry(&self, index: usize) -> &ToolEntry {
        &self.inner.entries[index]
    }

    /// The index of the tool whose key is `key`.
    pub(crate) fn index_of_key(&self, key: &str) -> Option<usize> {
        self.inner
            .entries
            .binary_search_by(|e| e.key().cmp(key))
            .ok()
    }

    /// Whether a tool of the catalog is `exclusive`.
    pub(crate) fn has_exclusive(&self) -> bool {
        self.inner.has_exclusive
    }

    /// Whether both handles are the same catalog (not merely equal ones).
    #[cfg(feature = "mcp")]
    pub(crate) fn same_as(&self, other: &Catalog) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl<'a> IntoIterator for &'a Catalog {
    type Item = &'a ToolEntry;
    type IntoIter = std::slice::Iter<'a, ToolEntry>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Catalog {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// Whether `module` is `prefix` or one of its submodules.
fn in_module(module: &str, prefix: &str) -> bool {
    match module.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || rest.starts_with("::"),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::in_module;

    #[test]
    fn module_prefix_matches_whole_segments_only() {
        assert!(in_module("shop::products", "shop::products"));
        assert!(in_module("shop::products::tools", "shop::products"));
        assert!(in_module("shop::products::tools", "shop"));
        assert!(!in_module("shop::productsx", "shop::products"));
        assert!(!in_module("other::shop", "shop"));
    }
}

//! The catalog: every tool linked into the binary, sorted, checked and
//! described once at start-up.

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::tool::{Effect, Location, Registration, Tool};

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
    by_name: HashMap<&'static str, usize, BuildHasherDefault<FnvHasher>>,
    by_type: HashMap<TypeId, usize, BuildHasherDefault<FnvHasher>>,
}

/// One tool of a [`Catalog`]: its metadata and schemas, built once.
///
/// Serializes as its descriptor (key, name, title, description, effect,
/// schemas, location); the executable parts never serialize.
#[derive(Clone)]
pub struct ToolEntry {
    registration: Registration,
    input_schema: Arc<Value>,
    output_schema: Option<Arc<Value>>,
}

impl ToolEntry {
    fn new(registration: Registration) -> Self {
        ToolEntry {
            input_schema: Arc::new((registration.input_schema)()),
            output_schema: (registration.output_schema)().map(Arc::new),
            registration,
        }
    }

    /// The stable capability key.
    pub fn key(&self) -> &'static str {
        self.registration.key
    }

    /// The caller-facing name.
    pub fn name(&self) -> &'static str {
        self.registration.name
    }

    /// The short human title, if declared.
    pub fn title(&self) -> Option<&'static str> {
        self.registration.title
    }

    /// The description shown to models.
    pub fn description(&self) -> &'static str {
        self.registration.description
    }

    /// The declared effect.
    pub fn effect(&self) -> Effect {
        self.registration.effect
    }

    /// Whether repeating the call has no further effect.
    pub fn idempotent(&self) -> bool {
        self.registration.idempotent
    }

    /// Whether the tool reaches outside the application's own systems.
    pub fn open_world(&self) -> bool {
        self.registration.open_world
    }

    /// The declared timeout, if any.
    pub fn timeout(&self) -> Option<Duration> {
        self.registration.timeout
    }

    /// Where the tool was declared.
    pub fn location(&self) -> Location {
        self.registration.location
    }

    /// The JSON Schema (draft 2020-12) of the arguments: exactly what the
    /// executor enforces.
    pub fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    /// The JSON Schema of the result, when the output type has one.
    pub fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_deref()
    }

    pub(crate) fn registration(&self) -> &Registration {
        &self.registration
    }
}

impl Serialize for ToolEntry {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Descriptor<'a> {
            key: &'a str,
            name: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            title: Option<&'a str>,
            description: &'a str,
            effect: Effect,
            idempotent: bool,
            open_world: bool,
            input_schema: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            output_schema: Option<&'a Value>,
            location: Location,
        }
        Descriptor {
            key: self.key(),
            name: self.name(),
            title: self.title(),
            description: self.description(),
            effect: self.effect(),
            idempotent: self.idempotent(),
            open_world: self.open_world(),
            input_schema: self.input_schema(),
            output_schema: self.output_schema(),
            location: self.location(),
        }
        .serialize(serializer)
    }
}

impl fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEntry")
            .field("key", &self.key())
            .field("name", &self.name())
            .field("effect", &self.effect())
            .field("location", &self.location())
            .finish_non_exhaustive()
    }
}

/// Two tools claim the same key or name.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Conflict {
    /// Two tools share a key.
    Key {
        /// The shared key.
        key: &'static str,
        /// The first declaration.
        first: Location,
        /// The second declaration.
        second: Location,
    },
    /// Two tools share a name.
    Name {
        /// The shared name.
        name: &'static str,
        /// The first declaration.
        first: Location,
        /// The second declaration.
        second: Location,
    },
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Conflict::Key { key, first, second } => {
                write!(
                    f,
                    "duplicate tool key `{key}`: declared at {first} and at {second}"
                )
            }
            Conflict::Name {
                name,
                first,
                second,
            } => {
                write!(
                    f,
                    "duplicate tool name `{name}`: declared at {first} and at {second}"
                )
            }
        }
    }
}

/// The catalog could not be built: every conflict found, in key order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogError {
    /// Every duplicate key and name.
    pub conflicts: Vec<Conflict>,
}

impl fmt::Display for CatalogError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, conflict) in self.conflicts.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{conflict}")?;
        }
        Ok(())
    }
}

impl Catalog {
    /// Every tool linked into the binary, sorted by key.
    ///
    /// Fails naming both declarations of any duplicate key or name.
    pub fn discover() -> Result<Catalog, CatalogError> {
        Self::from_registrations(inventory::iter::<Registration>().copied().collect())
    }

    /// The linked tools declared in the given modules (or their submodules),
    /// sorted by key: `Catalog::discover_in(["shop::products", "shop::orders"])`.
    ///
    /// ```
    /// use toolwright::Catalog;
    /// let none = Catalog::discover_in(["no_such_module"]).unwrap();
    /// assert!(none.is_empty());
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
                .copied()
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

    fn from_registrations(mut registrations: Vec<Registration>) -> Result<Catalog, CatalogError> {
        registrations.sort_by(|a, b| {
            (a.key, a.name, a.location.file, a.location.line).cmp(&(
                b.key,
                b.name,
                b.location.file,
                b.location.line,
            ))
        });
        // The same registration twice (linked once, registered again) is one tool.
        registrations.dedup_by(|a, b| a.location == b.location && a.key == b.key);

        let mut conflicts = Vec::new();
        let mut by_key: HashMap<&'static str, Location> = HashMap::new();
        let mut by_name: HashMap<&'static str, usize, BuildHasherDefault<FnvHasher>> =
            HashMap::default();
        let mut by_type: HashMap<TypeId, usize, BuildHasherDefault<FnvHasher>> = HashMap::default();
        for (index, r) in registrations.iter().enumerate() {
            if let Some(first) = by_key.insert(r.key, r.location) {
                conflicts.push(Conflict::Key {
                    key: r.key,
                    first,
                    second: r.location,
                });
            }
            if let Some(&first) = by_name.get(r.name) {
                conflicts.push(Conflict::Name {
                    name: r.name,
                    first: registrations[first].location,
                    second: r.location,
                });
            } else {
                by_name.insert(r.name, index);
            }
            by_type.insert((r.type_id)(), index);
        }
        if !conflicts.is_empty() {
            return Err(CatalogError { conflicts });
        }
        let entries = registrations.into_iter().map(ToolEntry::new).collect();
        Ok(Catalog {
            inner: Arc::new(CatalogInner {
                entries,
                by_name,
                by_type,
            }),
        })
    }

    /// The tool called `name`, in O(1).
    pub fn get(&self, name: &str) -> Option<&ToolEntry> {
        self.index_of(name).map(|i| &self.inner.entries[i])
    }

    /// The tool whose key is `key`.
    pub fn get_by_key(&self, key: &str) -> Option<&ToolEntry> {
        self.inner
            .entries
            .binary_search_by(|e| e.key().cmp(key))
            .ok()
            .map(|i| &self.inner.entries[i])
    }

    /// Every tool, sorted by key.
    pub fn iter(&self) -> std::slice::Iter<'_, ToolEntry> {
        self.inner.entries.iter()
    }

    /// How many tools.
    pub fn len(&self) -> usize {
        self.inner.entries.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.inner.entries.is_empty()
    }

    pub(crate) fn index_of(&self, name: &str) -> Option<usize> {
        self.inner.by_name.get(name).copied()
    }

    pub(crate) fn index_of_type<T: Tool>(&self) -> Option<usize> {
        self.inner.by_type.get(&TypeId::of::<T>()).copied()
    }

    pub(crate) fn entry(&self, index: usize) -> &ToolEntry {
        &self.inner.entries[index]
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

impl std::error::Error for CatalogError {}

/// FNV-1a for the per-call lookups: the keys (tool names and type ids) are
/// few and chosen by the application, and a caller only ever looks one up,
/// so SipHash's flood resistance buys nothing here.
#[derive(Default)]
struct FnvHasher(u64);

impl Hasher for FnvHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &byte in bytes {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Whether `module` is `prefix` or one of its submodules.
fn in_module(module: &str, prefix: &str) -> bool {
    match module.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || rest.starts_with("::"),
        None => false,
    }
}

/// Builds a [`Catalog`] from an explicit list of tools.
#[derive(Debug, Default)]
pub struct CatalogBuilder {
    registrations: Vec<Registration>,
}

impl CatalogBuilder {
    /// Adds tool `T` (the `...Args` struct `#[tool]` generated).
    pub fn register<T: Tool>(mut self) -> Self {
        self.registrations.push(Registration::of::<T>());
        self
    }

    /// Adds a registration.
    pub fn add_registration(mut self, registration: Registration) -> Self {
        self.registrations.push(registration);
        self
    }

    /// Sorts by key and checks for duplicate keys and names.
    pub fn build(self) -> Result<Catalog, CatalogError> {
        Catalog::from_registrations(self.registrations)
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

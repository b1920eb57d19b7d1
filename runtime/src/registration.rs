//! A tool's registration: its metadata and how the pipeline starts a JSON call of it.

use std::any::TypeId;
use std::fmt;
use std::time::Duration;

use crate::concurrency::Concurrency;
use crate::effect::Effect;
use crate::pipeline::JsonCall;
use crate::scope::Requirement;
use crate::tool::{Location, Tool};

/// A registration of one tool, collected at link time or added by hand.
///
/// `#[tool]` submits one for every tool; [`crate::registry::CatalogBuilder::register`]
/// builds one from a tool type when link-time collection is not wanted.
///
/// ```
/// use toolwright::registry::{CatalogBuilder, Registration};
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
/// // A tool crate can list its tools for platforms without link-time collection.
/// fn math_tools() -> Vec<Registration> {
///     vec![Registration::of::<AddArgs>(), Registration::of::<NegateArgs>()]
/// }
///
/// let catalog = math_tools()
///     .into_iter()
///     .fold(Catalog::builder(), CatalogBuilder::add_registration)
///     .build()
///     .unwrap();
/// assert_eq!(catalog.len(), 2);
/// ```
#[derive(Clone, Copy)]
pub struct Registration {
    pub(crate) key: &'static str,
    pub(crate) name: &'static str,
    pub(crate) title: Option<&'static str>,
    pub(crate) description: &'static str,
    pub(crate) effect: Effect,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) tags: &'static [&'static str],
    pub(crate) timeout: Option<Duration>,
    pub(crate) concurrency: Concurrency,
    pub(crate) max_result: Option<usize>,
    pub(crate) defer: bool,
    pub(crate) search_hint: Option<&'static str>,
    pub(crate) location: Location,
    pub(crate) type_id: fn() -> TypeId,
    pub(crate) input_schema: fn() -> serde_json::Value,
    pub(crate) output_schema: fn() -> Option<serde_json::Value>,
    pub(crate) requirements: fn(&mut Vec<Requirement>),
    /// Starts a JSON call of the tool (or its preflight): the seam between
    /// a name looked up at run time and the tool's own types.
    pub(crate) json: JsonCall,
}

impl Registration {
    /// The registration of tool `T`.
    ///
    /// ```
    /// use toolwright::{tool, registry::Registration};
    ///
    /// /// Echo a word.
    /// #[tool(key = "demo.echo", effect = read, authorize = public)]
    /// async fn echo(word: String) -> String { word }
    ///
    /// let registration = Registration::of::<EchoArgs>();
    /// assert_eq!(registration.name(), "echo");
    /// ```
    pub const fn of<T: Tool>() -> Self {
        Registration {
            key: T::KEY,
            name: T::NAME,
            title: T::TITLE,
            description: T::DESCRIPTION,
            effect: T::EFFECT,
            idempotent: T::IDEMPOTENT,
            open_world: T::OPEN_WORLD,
            tags: T::TAGS,
            timeout: T::TIMEOUT,
            concurrency: T::CONCURRENCY,
            max_result: T::MAX_RESULT,
            defer: T::DEFER,
            search_hint: T::SEARCH_HINT,
            location: T::LOCATION,
            type_id: TypeId::of::<T>,
            input_schema: T::__input_schema,
            output_schema: T::__output_schema,
            requirements: T::__requirements,
            json: crate::pipeline::json::<T>,
        }
    }

    /// The tool's key.
    ///
    /// ```
    /// use toolwright::{tool, registry::Registration};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// assert_eq!(Registration::of::<AddArgs>().key(), "math.add");
    /// ```
    pub const fn key(&self) -> &'static str {
        self.key
    }

    /// The tool's caller-facing name.
    ///
    /// ```
    /// use toolwright::{tool, registry::Registration};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", name = "sum", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// assert_eq!(Registration::of::<AddArgs>().name(), "sum");
    /// ```
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Where the tool was declared.
    ///
    /// ```
    /// use toolwright::{tool, registry::Registration};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let registration = Registration::of::<AddArgs>();
    /// assert_eq!(registration.location().module_path, module_path!());
    /// ```
    pub const fn location(&self) -> Location {
        self.location
    }
}

impl fmt::Debug for Registration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registration")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("effect", &self.effect)
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

inventory::collect!(Registration);

//! One tool of a catalog: what it declares, its schemas built on demand,
//! and what runs its calls.

use std::any::TypeId;
use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio::sync::Semaphore;

#[cfg(doc)]
use super::Catalog;
use crate::concurrency::Concurrency;
use crate::dynamic_call::Dynamic;
use crate::effect::Effect;
use crate::error::CallError;
use crate::overrides::Override;
use crate::pipeline::{Env, Served, Validation};
use crate::registration::Registration;
use crate::scope::Requirement;
use crate::tool::Location;
use crate::tool_str::ToolStr;
use crate::util::BoxFuture;

/// One tool of a [`Catalog`]: its metadata and schemas (each schema built
/// when first asked for, then kept).
///
/// Serializes as its descriptor: key, name, title (when declared),
/// description, effect, idempotent, open_world, tags (always, possibly
/// empty), input schema, output schema (when there is one) and location.
/// The timeout, the concurrency, the result bound and the executable parts
/// are not serialized.
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Invocation};
///
/// struct Actor;
///
/// /// Cancel an order that has not shipped.
/// #[tool(
///     key = "orders.cancel",
///     title = "Cancel order",
///     effect = destructive,
///     tags = ["orders", "support"],
///     authorize = public,
///     approve = ask_support
/// )]
/// async fn cancel_order(
///     /// The order to cancel.
///     order_id: u64,
/// ) -> bool {
///     true
/// }
///
/// async fn ask_support(_: &Actor, _: &Invocation<'_, CancelOrderArgs>) -> bool {
///     false
/// }
///
/// let catalog = Catalog::builder().register::<CancelOrderArgs>().build().unwrap();
/// let entry = catalog.get("cancel_order").unwrap();
///
/// // What a model provider or an MCP client is shown.
/// let descriptor = serde_json::to_value(entry).unwrap();
/// assert_eq!(descriptor["key"], "orders.cancel");
/// assert_eq!(descriptor["title"], "Cancel order");
/// assert_eq!(descriptor["description"], "Cancel an order that has not shipped.");
/// assert_eq!(descriptor["effect"], "destructive");
/// assert_eq!(descriptor["tags"], json!(["orders", "support"]));
/// assert_eq!(descriptor["input_schema"]["required"], json!(["order_id"]));
/// assert_eq!(descriptor["output_schema"]["type"], "boolean");
/// ```
#[derive(Clone)]
pub struct ToolEntry {
    inner: Arc<Entry>,
}

struct Entry {
    /// Key, name, effect and timeout as the tool is served.
    served: Served,
    /// Key and name as declared, before any namespace.
    declared: (ToolStr, ToolStr),
    title: Option<Cow<'static, str>>,
    description: Cow<'static, str>,
    idempotent: bool,
    open_world: bool,
    tags: Cow<'static, [&'static str]>,
    /// The timeout as declared; `served` holds the one in force.
    timeout: Option<Duration>,
    max_result: Option<usize>,
    /// Deferred as declared; an override may say otherwise.
    defer: bool,
    search_hint: Option<Cow<'static, str>>,
    /// What an operator changed at run time, if anything.
    overrides: Option<Arc<Override>>,
    location: Location,
    source: Source,
    /// Shared with the same tool served under another name.
    schemas: Arc<Schemas>,
}

/// What runs a tool's calls.
#[derive(Clone)]
#[expect(
    clippy::large_enum_variant,
    reason = "one per tool, inside its entry's Arc: a box would cost an allocation per tool"
)]
enum Source {
    /// A `#[tool]`: its registration's schema builders and JSON call.
    Registered(Registration),
    /// A tool built at run time: its hooks and handler.
    Dynamic(Arc<Dynamic>),
}

/// A tool's schemas, generated the first time they are asked for: building
/// a catalog then costs little, and a schema nobody reads (the output schema
/// of a provider export, say) is never built. Clones of an entry share them,
/// and the permits of a tool with `concurrency = N`.
#[derive(Default)]
struct Schemas {
    input: OnceLock<Value>,
    output: OnceLock<Option<Value>>,
    /// Read from `output` by every MCP call's result.
    #[cfg(feature = "mcp")]
    output_shape: OnceLock<OutputShape>,
    validation: OnceLock<Validation>,
    limiter: Option<Semaphore>,
}

impl Schemas {
    /// None built yet, and the permits `concurrency` asks for.
    fn limited(concurrency: Concurrency) -> Self {
        let limiter = match concurrency {
            Concurrency::Limit(n) => Some(Semaphore::new(
                usize::try_from(n.get())
                    .map_or(Semaphore::MAX_PERMITS, |n| n.min(Semaphore::MAX_PERMITS)),
            )),
            _ => None,
        };
        Schemas {
            limiter,
            ..Schemas::default()
        }
    }
}

/// What a tool's output schema says its results are, worked out once per
/// tool: MCP shapes each result by it.
#[cfg(feature = "mcp")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputShape {
    /// No output schema.
    Unknown,
    /// [`Contents`](crate::Contents): content blocks.
    Contents,
    /// A JSON object.
    Object,
    /// A string the schema puts no rule on (no length, pattern, format or
    /// set of values): a string cut short still matches it.
    Text,
    /// Any other value: a number, a constrained string, an array, one of
    /// several types.
    Other,
}

#[cfg(feature = "mcp")]
impl OutputShape {
    fn of(schema: Option<&Value>) -> Self {
        match schema {
            None => OutputShape::Unknown,
            Some(_) if crate::content::is_contents(schema) => OutputShape::Contents,
            Some(schema) if schema.get("type").and_then(Value::as_str) == Some("object") => {
                OutputShape::Object
            }
            Some(schema) if is_plain_string(schema) => OutputShape::Text,
            Some(_) => OutputShape::Other,
        }
    }
}

/// Whether `schema` is `"type": "string"` and says nothing else a value
/// must meet (annotations such as a title may be there).
#[cfg(feature = "mcp")]
fn is_plain_string(schema: &Value) -> bool {
    const ANNOTATIONS: [&str; 6] = [
        "$schema",
        "title",
        "description",
        "type",
        "examples",
        "default",
    ];
    schema.get("type").and_then(Value::as_str) == Some("string")
        && schema
            .as_object()
            .is_some_and(|keys| keys.keys().all(|key| ANNOTATIONS.contains(&key.as_str())))
}

/// What a tool built at run time declares (`DynamicTool`'s builder checks it).
pub(crate) struct Declared {
    pub(crate) key: ToolStr,
    pub(crate) name: ToolStr,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) effect: Effect,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
    pub(crate) tags: Vec<&'static str>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) concurrency: Concurrency,
    pub(crate) max_result: Option<usize>,
    pub(crate) defer: bool,
    pub(crate) search_hint: Option<String>,
    pub(crate) location: Location,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
}

impl ToolEntry {
    pub(super) fn new(registration: Registration) -> Self {
        let r = registration;
        let (key, name) = (ToolStr::from_static(r.key), ToolStr::from_static(r.name));
        ToolEntry {
            inner: Arc::new(Entry {
                served: Served {
                    key: key.clone(),
                    name: name.clone(),
                    effect: r.effect,
                    timeout: r.timeout,
                    concurrency: r.concurrency,
                },
                declared: (key, name),
                title: r.title.map(Cow::Borrowed),
                description: Cow::Borrowed(r.description),
                idempotent: r.idempotent,
                open_world: r.open_world,
                tags: Cow::Borrowed(r.tags),
                timeout: r.timeout,
                max_result: r.max_result,
                defer: r.defer,
                search_hint: r.search_hint.map(Cow::Borrowed),
                overrides: None,
                location: r.location,
                schemas: Arc::new(Schemas::limited(r.concurrency)),
                source: Source::Registered(r),
            }),
        }
    }

    /// A tool built at run time.
    pub(crate) fn dynamic(declared: Declared, tool: Dynamic) -> Self {
        let schemas = Schemas::limited(declared.concurrency);
        _ = schemas.input.set(declared.input_schema);
        _ = schemas.output.set(declared.output_schema);
        ToolEntry {
            inner: Arc::new(Entry {
                served: Served {
                    key: declared.key.clone(),
                    name: declared.name.clone(),
                    effect: declared.effect,
                    timeout: declared.timeout,
                    concurrency: declared.concurrency,
                },
                declared: (declared.key, declared.name),
                title: declared.title.map(Cow::Owned),
                description: Cow::Owned(declared.description),
                idempotent: declared.idempotent,
                open_world: declared.open_world,
                tags: Cow::Owned(declared.tags),
                timeout: declared.timeout,
                max_result: declared.max_result,
                defer: declared.defer,
                search_hint: declared.search_hint.map(Cow::Owned),
                overrides: None,
                location: declared.location,
                source: Source::Dynamic(Arc::new(tool)),
                schemas: Arc::new(schemas),
            }),
        }
    }

    /// The same tool served under another key and name (a namespace's): its
    /// calls, errors and approval digests carry the new ones.
    pub(crate) fn served_as(&self, key: ToolStr, name: ToolStr) -> Self {
        let was = &self.inner.served;
        let served = Served {
            key,
            name,
            effect: was.effect,
            timeout: was.timeout,
            concurrency: was.concurrency,
        };
        self.remade(served, self.inner.overrides.clone())
    }

    /// The same tool with `overrides` (`None`: as declared) in force.
    pub(crate) fn with_override(&self, overrides: Option<Arc<Override>>) -> Self {
        let declared = self.inner.timeout;
        let served = Served {
            timeout: overrides.as_ref().and_then(|o| o.timeout).or(declared),
            ..self.inner.served.clone()
        };
        self.remade(served, overrides)
    }

    /// This tool served as `served` with `overrides`; everything else, the
    /// schemas and permits included, shared.
    fn remade(&self, served: Served, overrides: Option<Arc<Override>>) -> Self {
        let entry = &*self.inner;
        ToolEntry {
            inner: Arc::new(Entry {
                served,
                declared: entry.declared.clone(),
                title: entry.title.clone(),
                description: entry.description.clone(),
                idempotent: entry.idempotent,
                open_world: entry.open_world,
                tags: entry.tags.clone(),
                timeout: entry.timeout,
                max_result: entry.max_result,
                defer: entry.defer,
                search_hint: entry.search_hint.clone(),
                overrides,
                location: entry.location,
                source: entry.source.clone(),
                schemas: entry.schemas.clone(),
            }),
        }
    }

    /// What an operator changed about the tool at run time
    /// ([`Registry::set_override`](crate::registry::Registry::set_override)), if
    /// anything. The accessors of this entry already answer with it.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, registry::{Override, Registry, Selector}};
    ///
    /// /// Look up an order.
    /// #[tool(key = "orders.get", effect = read, authorize = public)]
    /// async fn get_order(id: u64) -> u64 { id }
    ///
    /// let registry = Registry::new(Catalog::builder().register::<GetOrderArgs>().build().unwrap());
    /// assert!(registry.tools().get("get_order").unwrap().overridden().is_none());
    /// let clearer = Override::new().description("Look up an order by its receipt number.");
    /// registry.set_override(&Selector::name("get_order"), clearer.clone()).unwrap();
    /// let tools = registry.tools();
    /// let tool = tools.get("get_order").unwrap();
    /// assert_eq!(tool.overridden(), Some(&clearer));
    /// assert_eq!(tool.description(), "Look up an order by its receipt number.");
    /// ```
    pub fn overridden(&self) -> Option<&Override> {
        self.inner.overrides.as_deref()
    }

    /// The stable capability key.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", name = "get_product", effect = read, authorize = public)]
    /// async fn get(id: u64) -> u64 { id }
    ///
    /// let catalog = Catalog::builder().register::<GetArgs>().build().unwrap();
    /// let entry = catalog.get("get_product").unwrap();
    /// assert_eq!(entry.key(), "products.get");
    /// assert_eq!(catalog.get_by_key(entry.key()).unwrap().name(), "get_product");
    /// ```
    pub fn key(&self) -> &str {
        &self.inner.served.key
    }

    /// The caller-facing name: `name = "..."`, or the fn's name.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", name = "get_product", effect = read, authorize = public)]
    /// async fn get(id: u64) -> u64 { id }
    ///
    /// /// List every product.
    /// #[tool(key = "products.list", effect = read, authorize = public)]
    /// async fn list_products() -> Vec<u64> { Vec::new() }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetArgs>()
    ///     .register::<ListProductsArgs>()
    ///     .build()
    ///     .unwrap();
    /// let names: Vec<_> = catalog.iter().map(|tool| tool.name()).collect();
    /// assert_eq!(names, ["get_product", "list_products"]);
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.served.name
    }

    /// The short human title, if declared.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", title = "Product details", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// /// List every product.
    /// #[tool(key = "products.list", effect = read, authorize = public)]
    /// async fn list_products() -> Vec<u64> { Vec::new() }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetProductArgs>()
    ///     .register::<ListProductsArgs>()
    ///     .build()
    ///     .unwrap();
    /// // A user interface shows the title when there is one, the name otherwise.
    /// let label = |name: &str| {
    ///     let tool = catalog.get(name).unwrap();
    ///     tool.title().unwrap_or(tool.name())
    /// };
    /// assert_eq!(label("get_product"), "Product details");
    /// assert_eq!(label("list_products"), "list_products");
    /// ```
    pub fn title(&self) -> Option<&str> {
        match self.overridden().and_then(|o| o.title.as_deref()) {
            Some(title) => Some(title),
            None => self.inner.title.as_deref(),
        }
    }

    /// The description shown to models: `description = "..."`, or the fn's
    /// doc comment.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Look up a product by its identifier.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// /// For developers: models read the `description` instead.
    /// #[tool(
    ///     key = "products.list",
    ///     description = "List every product.",
    ///     effect = read,
    ///     authorize = public
    /// )]
    /// async fn list_products() -> Vec<u64> { Vec::new() }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetProductArgs>()
    ///     .register::<ListProductsArgs>()
    ///     .build()
    ///     .unwrap();
    /// let described = |name: &str| catalog.get(name).unwrap().description();
    /// assert_eq!(described("get_product"), "Look up a product by its identifier.");
    /// assert_eq!(described("list_products"), "List every product.");
    /// ```
    pub fn description(&self) -> &str {
        match self.overridden().and_then(|o| o.description.as_deref()) {
            Some(description) => description,
            None => &self.inner.description,
        }
    }

    /// The declared effect.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Effect, Invocation};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// /// Delete a product.
    /// #[tool(key = "products.delete", effect = destructive, authorize = public, approve = ask)]
    /// async fn delete_product(id: u64) -> bool { true }
    ///
    /// async fn ask(_: &(), _: &Invocation<'_, DeleteProductArgs>) -> bool { false }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetProductArgs>()
    ///     .register::<DeleteProductArgs>()
    ///     .build()
    ///     .unwrap();
    /// // Offer a read-only assistant only the tools that change nothing.
    /// let read_only: Vec<_> = catalog
    ///     .iter()
    ///     .filter(|tool| tool.effect() == Effect::Read)
    ///     .map(|tool| tool.name())
    ///     .collect();
    /// assert_eq!(read_only, ["get_product"]);
    /// ```
    pub fn effect(&self) -> Effect {
        self.inner.served.effect
    }

    /// Whether repeating the call has no further effect: `idempotent = ...`,
    /// by default `true` for `read` tools and `false` for the others.
    ///
    /// ```
    /// use toolwright::{tool, Catalog, Invocation};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// /// Set a product's price.
    /// #[tool(key = "products.set_price", effect = write, idempotent, authorize = public,
    ///        approve = ask)]
    /// async fn set_price(id: u64, cents: u64) -> bool { true }
    ///
    /// /// Add stock to a product.
    /// #[tool(key = "products.restock", effect = write, authorize = public, approve = ask)]
    /// async fn restock(id: u64, quantity: u64) -> bool { true }
    ///
    /// async fn ask<A>(_: &(), _: &Invocation<'_, A>) -> bool { false }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetProductArgs>()
    ///     .register::<SetPriceArgs>()
    ///     .register::<RestockArgs>()
    ///     .build()
    ///     .unwrap();
    /// // Retry a call that timed out only where repeating it is harmless.
    /// let retryable: Vec<_> = catalog
    ///     .iter()
    ///     .filter(|tool| tool.idempotent())
    ///     .map(|tool| tool.name())
    ///     .collect();
    /// assert_eq!(retryable, ["get_product", "set_price"]);
    /// ```
    pub fn idempotent(&self) -> bool {
        self.inner.idempotent
    }

    /// Whether the tool reaches outside the application's own systems (the
    /// web, e-mail, third-party APIs): `open_world = ...`, by default `false`.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Fetch a web page.
    /// #[tool(key = "web.fetch", effect = read, open_world, authorize = public)]
    /// async fn fetch_page(url: String) -> String { url }
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<FetchPageArgs>()
    ///     .register::<GetProductArgs>()
    ///     .build()
    ///     .unwrap();
    /// assert!(catalog.get("fetch_page").unwrap().open_world());
    /// assert!(!catalog.get("get_product").unwrap().open_world());
    /// ```
    pub fn open_world(&self) -> bool {
        self.inner.open_world
    }

    /// Whether the tool is deferred: left out of a first tool list and
    /// found by a search. As declared (`defer`), unless an operator said
    /// otherwise ([`Registry::defer`](crate::registry::Registry::defer)).
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Export every order as CSV.
    /// #[tool(key = "orders.export", effect = read, authorize = public, defer)]
    /// async fn export_orders(month: u8) -> String { String::new() }
    ///
    /// let catalog = Catalog::builder().register::<ExportOrdersArgs>().build().unwrap();
    /// assert!(catalog.get("export_orders").unwrap().deferred());
    /// ```
    pub fn deferred(&self) -> bool {
        let overridden = self.inner.overrides.as_ref().and_then(|o| o.deferred);
        overridden.unwrap_or(self.inner.defer)
    }

    /// The words a search matches besides the tool's own
    /// (`search_hint = "..."`), if declared.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Export every order as CSV.
    /// #[tool(key = "orders.export", effect = read, authorize = public,
    ///        search_hint = "spreadsheet download report")]
    /// async fn export_orders(month: u8) -> String { String::new() }
    ///
    /// let catalog = Catalog::builder().register::<ExportOrdersArgs>().build().unwrap();
    /// let hint = catalog.get("export_orders").unwrap().search_hint();
    /// assert_eq!(hint, Some("spreadsheet download report"));
    /// ```
    pub fn search_hint(&self) -> Option<&str> {
        self.inner.search_hint.as_deref()
    }

    /// The tags declared with `tags = [...]`, in the order written; empty
    /// when there are none.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Look up a customer.
    /// #[tool(key = "customers.get", effect = read, tags = ["pii", "crm"], authorize = public)]
    /// async fn get_customer(id: u64) -> u64 { id }
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetCustomerArgs>()
    ///     .register::<GetProductArgs>()
    ///     .build()
    ///     .unwrap();
    /// // Keep tools that touch personal data away from an anonymous assistant.
    /// let anonymous: Vec<_> = catalog
    ///     .iter()
    ///     .filter(|tool| !tool.tags().contains(&"pii"))
    ///     .map(|tool| tool.name())
    ///     .collect();
    /// assert_eq!(anonymous, ["get_product"]);
    /// assert_eq!(catalog.get("get_customer").unwrap().tags(), ["pii", "crm"]);
    /// ```
    pub fn tags(&self) -> &[&'static str] {
        &self.inner.tags
    }

    /// The declared timeout (`timeout = "30s"`), if any.
    ///
    /// The executor's default timeout
    /// ([`ExecutorBuilder::default_timeout`](crate::executor::ExecutorBuilder::default_timeout))
    /// covers the tools that declare none; it is not reported here.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Render a sales report.
    /// #[tool(key = "reports.render", effect = read, timeout = "2m", authorize = public)]
    /// async fn render_report(month: u32) -> String { String::new() }
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<RenderReportArgs>()
    ///     .register::<GetProductArgs>()
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(catalog.get("render_report").unwrap().timeout(), Some(Duration::from_secs(120)));
    /// assert_eq!(catalog.get("get_product").unwrap().timeout(), None);
    /// ```
    pub fn timeout(&self) -> Option<Duration> {
        self.inner.served.timeout
    }

    /// How many calls of the tool may run at once (`concurrency = N`,
    /// `exclusive`); see [`Concurrency`].
    ///
    /// ```
    /// use toolwright::{tool, Catalog, executor::Concurrency};
    ///
    /// /// Rebuild the search index, with nothing else running.
    /// #[tool(key = "search.reindex", effect = read, exclusive, authorize = public)]
    /// async fn reindex() -> bool { true }
    ///
    /// let catalog = Catalog::builder().register::<ReindexArgs>().build().unwrap();
    /// assert_eq!(catalog.get("reindex").unwrap().concurrency(), Concurrency::Exclusive);
    /// ```
    pub fn concurrency(&self) -> Concurrency {
        self.inner.served.concurrency
    }

    /// The declared bound on the text of a result shown to a model
    /// (`max_result = N` characters), if any.
    ///
    /// The executor's default
    /// ([`ExecutorBuilder::max_result`](crate::executor::ExecutorBuilder::max_result))
    /// covers the tools that declare none; it is not reported here.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Fetch a web page as text.
    /// #[tool(key = "web.fetch", effect = read, max_result = 20_000, authorize = public)]
    /// async fn fetch_page(url: String) -> String { url }
    ///
    /// let catalog = Catalog::builder().register::<FetchPageArgs>().build().unwrap();
    /// assert_eq!(catalog.get("fetch_page").unwrap().max_result(), Some(20_000));
    /// ```
    pub fn max_result(&self) -> Option<usize> {
        match self.overridden().and_then(|o| o.max_result) {
            Some(chars) => Some(chars),
            None => self.inner.max_result,
        }
    }

    /// Where the tool was declared.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> u64 { id }
    ///
    /// let catalog = Catalog::builder().register::<GetProductArgs>().build().unwrap();
    /// let location = catalog.get("get_product").unwrap().location();
    /// // The module is what `Catalog::discover_in` selects on.
    /// assert_eq!(location.module_path, module_path!());
    /// println!("`products.get` is declared at {location}");
    /// ```
    pub fn location(&self) -> Location {
        self.inner.location
    }

    /// The JSON Schema (draft 2020-12) of the arguments: exactly what the
    /// executor enforces.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog};
    ///
    /// /// Search products.
    /// #[tool(key = "products.search", effect = read, authorize = public)]
    /// async fn search(
    ///     /// Words to look for.
    ///     query: String,
    ///     /// How many results, at most.
    ///     #[default = 10]
    ///     #[schemars(range(min = 1, max = 50))]
    ///     limit: u32,
    /// ) -> Vec<u64> {
    ///     Vec::new()
    /// }
    ///
    /// let catalog = Catalog::builder().register::<SearchArgs>().build().unwrap();
    /// let schema = catalog.get("search").unwrap().input_schema();
    /// assert_eq!(schema["required"], json!(["query"]));
    /// assert_eq!(schema["properties"]["query"]["description"], "Words to look for.");
    /// assert_eq!(schema["properties"]["limit"]["default"], 10);
    /// assert_eq!(schema["properties"]["limit"]["maximum"], 50);
    /// assert_eq!(schema["additionalProperties"], false);
    /// ```
    pub fn input_schema(&self) -> &Value {
        let schemas = &self.inner.schemas;
        schemas.input.get_or_init(|| match &self.inner.source {
            Source::Registered(r) => (r.input_schema)(),
            // Set when the tool was built.
            Source::Dynamic(_) => Value::Object(serde_json::Map::new()),
        })
    }

    /// The JSON Schema of the result, when the output type has one (implements
    /// `schemars::JsonSchema`); `None` when it is only `Serialize`.
    ///
    /// ```
    /// use toolwright::{tool, Catalog};
    ///
    /// #[derive(serde::Serialize, schemars::JsonSchema)]
    /// struct Product { id: u64, name: String }
    ///
    /// #[derive(serde::Serialize)]
    /// struct Handle(u64);
    ///
    /// /// Look up a product.
    /// #[tool(key = "products.get", effect = read, authorize = public)]
    /// async fn get_product(id: u64) -> Product { Product { id, name: "Lamp".into() } }
    ///
    /// /// A product's internal handle.
    /// #[tool(key = "products.handle", effect = read, authorize = public)]
    /// async fn product_handle(id: u64) -> Handle { Handle(id) }
    ///
    /// let catalog = Catalog::builder()
    ///     .register::<GetProductArgs>()
    ///     .register::<ProductHandleArgs>()
    ///     .build()
    ///     .unwrap();
    /// let product = catalog.get("get_product").unwrap().output_schema().unwrap();
    /// assert_eq!(product["properties"]["name"]["type"], "string");
    /// assert!(catalog.get("product_handle").unwrap().output_schema().is_none());
    /// ```
    pub fn output_schema(&self) -> Option<&Value> {
        let schemas = &self.inner.schemas;
        schemas
            .output
            .get_or_init(|| match &self.inner.source {
                Source::Registered(r) => (r.output_schema)(),
                Source::Dynamic(_) => None,
            })
            .as_ref()
    }

    /// What the output schema says the results are.
    #[cfg(feature = "mcp")]
    pub(crate) fn output_shape(&self) -> OutputShape {
        *self
            .inner
            .schemas
            .output_shape
            .get_or_init(|| OutputShape::of(self.output_schema()))
    }

    /// The permits of a tool with `concurrency = N`, shared by every clone
    /// of this entry (and the same tool under another namespace).
    pub(crate) fn limiter(&self) -> Option<&Semaphore> {
        self.inner.schemas.limiter.as_ref()
    }

    /// How the tool's arguments are checked against its input schema.
    pub(crate) fn validation(&self) -> &Validation {
        self.inner
            .schemas
            .validation
            .get_or_init(|| Validation::new(self.input_schema()))
    }

    /// The key and name the tool was declared with, before any namespace.
    pub(crate) fn declared(&self) -> &(ToolStr, ToolStr) {
        &self.inner.declared
    }

    /// The tool as its calls are served.
    pub(crate) fn served(&self) -> &Served {
        &self.inner.served
    }

    /// What the tool injects, for the executor to check against its
    /// container (a tool built at run time declares nothing).
    pub(crate) fn requirements(&self, out: &mut Vec<Requirement>) {
        if let Source::Registered(r) = &self.inner.source {
            (r.requirements)(out);
        }
    }

    /// The type of a `#[tool]`'s arguments, for typed calls.
    pub(super) fn type_id(&self) -> Option<TypeId> {
        match &self.inner.source {
            Source::Registered(r) => Some((r.type_id)()),
            Source::Dynamic(_) => None,
        }
    }

    /// Starts a JSON call of the tool: steps 2 to 7 of the pipeline.
    #[inline]
    pub(crate) fn call<'a>(
        &'a self,
        env: Env<'a>,
        arguments: Value,
    ) -> BoxFuture<'a, Result<Value, CallError>> {
        match &self.inner.source {
            Source::Registered(r) => (r.json)(env, arguments),
            Source::Dynamic(tool) => crate::pipeline::dynamic_json(env, tool, arguments),
        }
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
            tags: &'a [&'a str],
            #[serde(skip_serializing_if = "std::ops::Not::not")]
            deferred: bool,
            #[serde(skip_serializing_if = "Option::is_none")]
            search_hint: Option<&'a str>,
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
            tags: self.tags(),
            deferred: self.deferred(),
            search_hint: self.search_hint(),
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

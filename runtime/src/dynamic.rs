//! Tools without the macro: built at run time from a schema and an async
//! JSON handler (from configuration, a plugin, a remote server).

use std::any::Any;
use std::time::Duration;

use serde_json::Value;

use crate::catalog::{Declared, ToolEntry};
use crate::concurrency::Concurrency;
use crate::dynamic_call::{Arguments, Dynamic, DynamicCall, ErasedHook, Handler, erase_hook};
use crate::effect::Effect;
use crate::error::BoxError;
use crate::hook::IntoVerdict;
use crate::invocation::Invocation;
use crate::tool::Location;
use crate::tool_str::ToolStr;
use crate::util::BoxFuture;
use crate::util::intern::intern;
use crate::util::names::{is_valid_key, is_valid_name, is_valid_tag};

/// A tool built at run time: a key, a name, a description, an effect, an
/// input schema (and optionally an output schema), an async handler over
/// JSON, and the same `authorize` / `approve` hooks a `#[tool]` has.
///
/// It runs through the same pipeline as a `#[tool]`: its arguments are
/// validated against its own schema (in full, every violation reported),
/// the registry's policy and its hooks are asked, approvals are bound to
/// the digest of its key and canonical arguments, and the handler runs
/// under the tool's timeout with a per-call scope it can resolve from.
/// Add it to a [`Registry`](crate::registry::Registry) with
/// [`register`](crate::registry::Registry::register).
///
/// Its key and name ([`ToolStr`](crate::registry::ToolStr)s) are freed with the last
/// thing that holds the tool, so a registry that imports and drops tools
/// keeps nothing of them. Its tags are kept for the life of the process,
/// once each however often they are used: `ToolEntry::tags` lends them as
/// `&'static str`, as it does a `#[tool]`'s.
///
/// ```
/// use serde_json::json;
/// use toolwright::{Catalog, CallError, Container, Effect, Executor, registry::{DynamicTool, Registry}};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // A tool described by configuration, not by Rust types.
/// let echo = DynamicTool::builder("util.echo", "echo")
///     .description("Say a word back.")
///     .effect(Effect::Read)
///     .input_schema(json!({
///         "type": "object",
///         "properties": {"word": {"type": "string", "maxLength": 10}},
///         "required": ["word"],
///         "additionalProperties": false,
///     }))
///     .handler(|call| Box::pin(async move { Ok(call.arguments()["word"].clone()) }))
///     .build()
///     .unwrap();
///
/// let registry = Registry::new(Catalog::builder().build().unwrap());
/// registry.register(echo).unwrap();
/// let executor = Executor::new(registry, Container::default()).unwrap();
///
/// assert_eq!(executor.invoke("echo", json!({"word": "hi"}), &()).await.unwrap(), "hi");
/// let long = executor.invoke("echo", json!({"word": "far too long"}), &()).await;
/// assert!(matches!(long, Err(CallError::InvalidArguments { .. })));
/// # }
/// ```
#[derive(Clone)]
pub struct DynamicTool {
    entry: ToolEntry,
}

impl DynamicTool {
    /// Starts a tool with `key` (dot-separated lowercase segments, as for
    /// `#[tool]`) and caller-facing `name` (`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`).
    /// Both are checked by [`DynamicToolBuilder::build`].
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("weather.get", "get_weather");
    /// # let _ = builder;
    /// ```
    #[track_caller]
    pub fn builder(key: impl Into<String>, name: impl Into<String>) -> DynamicToolBuilder {
        let caller = std::panic::Location::caller();
        DynamicToolBuilder {
            key: key.into(),
            name: name.into(),
            title: None,
            description: None,
            effect: None,
            idempotent: false,
            open_world: false,
            tags: Vec::new(),
            timeout: None,
            concurrency: Concurrency::Unlimited,
            max_result: None,
            defer: false,
            search_hint: None,
            input_schema: None,
            output_schema: None,
            authorize: None,
            approve: None,
            handler: None,
            location: Location {
                file: caller.file(),
                line: caller.line(),
                module_path: "<built at run time>",
            },
        }
    }

    /// The tool's key.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Effect, registry::DynamicTool};
    ///
    /// let tool = DynamicTool::builder("util.ping", "ping")
    ///     .description("Answer pong.")
    ///     .effect(Effect::Read)
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_| Box::pin(async { Ok(json!("pong")) }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!((tool.key(), tool.name()), ("util.ping", "ping"));
    /// ```
    pub fn key(&self) -> &str {
        self.entry.key()
    }

    /// The tool's caller-facing name.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Effect, registry::DynamicTool};
    ///
    /// let tool = DynamicTool::builder("util.ping", "ping")
    ///     .description("Answer pong.")
    ///     .effect(Effect::Read)
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_| Box::pin(async { Ok(json!("pong")) }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(tool.entry().description(), "Answer pong.");
    /// ```
    pub fn name(&self) -> &str {
        self.entry.name()
    }

    /// The tool as a catalog describes it: metadata and schemas.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Effect, registry::DynamicTool};
    ///
    /// let tool = DynamicTool::builder("util.ping", "ping")
    ///     .description("Answer pong.")
    ///     .effect(Effect::Read)
    ///     .tags(["diagnostics"])
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_| Box::pin(async { Ok(json!("pong")) }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(tool.entry().tags(), ["diagnostics"]);
    /// ```
    pub fn entry(&self) -> &ToolEntry {
        &self.entry
    }

    pub(crate) fn into_entry(self) -> ToolEntry {
        self.entry
    }
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("DynamicTool").field(&self.entry).finish()
    }
}

/// Builds a [`DynamicTool`]; [`build`](Self::build) checks it all at once.
pub struct DynamicToolBuilder {
    key: String,
    name: String,
    title: Option<String>,
    description: Option<String>,
    effect: Option<Effect>,
    idempotent: bool,
    open_world: bool,
    tags: Vec<String>,
    timeout: Option<Duration>,
    concurrency: Concurrency,
    max_result: Option<usize>,
    defer: bool,
    search_hint: Option<String>,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    authorize: Option<ErasedHook>,
    approve: Option<ErasedHook>,
    handler: Option<Handler>,
    location: Location,
}

/// One reason a [`DynamicTool`] could not be built.
///
/// ```
/// use serde_json::json;
/// use toolwright::{Effect, registry::{DynamicTool, DynamicToolProblem}};
///
/// let error = DynamicTool::builder("Orders.Get", "get order")
///     .effect(Effect::Write)
///     .input_schema(json!({"type": "object", "properties": {"id": {"type": "integr"}}}))
///     .build()
///     .unwrap_err();
/// // Every mistake at once.
/// assert!(matches!(error.problems[..], [
///     DynamicToolProblem::InvalidKey { .. },
///     DynamicToolProblem::InvalidName { .. },
///     DynamicToolProblem::MissingDescription,
///     DynamicToolProblem::InvalidSchema { .. },
///     DynamicToolProblem::MissingApprove { .. },
///     DynamicToolProblem::MissingHandler,
/// ]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicToolProblem {
    /// The key is not dot-separated lowercase segments.
    #[error(
        "the key `{key}` is not dot-separated lowercase segments (letters, digits and `_`, each starting with a letter)"
    )]
    InvalidKey {
        /// The key given.
        key: String,
    },
    /// The name breaks the providers' rule.
    #[error("the name `{name}` does not match `^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$`")]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// A tag is not a lowercase word of at most 32 characters.
    #[error(
        "the tag `{tag}` is not a lowercase word of at most 32 characters (`^[a-z][a-z0-9_-]*$`)"
    )]
    InvalidTag {
        /// The tag given.
        tag: String,
    },
    /// Neither a description nor a title: a model would not know what the tool does.
    #[error("the tool has neither a description nor a title")]
    MissingDescription,
    /// No effect was declared.
    #[error("the tool declares no effect (read, write or destructive)")]
    MissingEffect,
    /// A result bound of zero characters would show a model nothing.
    #[error("the result bound (`max_result`) is zero characters")]
    ZeroMaxResult,
    /// No input schema was given.
    #[error("the tool has no input schema")]
    MissingInputSchema,
    /// A schema is not a JSON Schema object that compiles.
    #[error("the {which} schema is not valid: {message}")]
    InvalidSchema {
        /// `"input"` or `"output"`.
        which: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A `write` or `destructive` tool without an `approve` hook.
    #[error("a `{effect}` tool needs an `approve` hook")]
    MissingApprove {
        /// The declared effect.
        effect: Effect,
    },
    /// An `approve` hook on a `read` tool, which is never asked.
    #[error("`approve` is only asked for `write` and `destructive` tools")]
    UnexpectedApprove,
    /// No handler: nothing would run.
    #[error("the tool has no handler")]
    MissingHandler,
}

/// A [`DynamicTool`] could not be built: every problem found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", crate::util::Joined(.problems))]
pub struct DynamicToolError {
    /// Every problem, in the order the builder checks them.
    pub problems: Vec<DynamicToolProblem>,
}

impl DynamicToolBuilder {
    /// A short human-readable title.
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("weather.get", "get_weather").title("Weather");
    /// # let _ = builder;
    /// ```
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the tool does, shown to models.
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("weather.get", "get_weather")
    ///     .description("The weather in a city, today.");
    /// # let _ = builder;
    /// ```
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// What the tool does to the world (required).
    ///
    /// ```
    /// use toolwright::{Effect, registry::DynamicTool};
    /// let builder = DynamicTool::builder("weather.get", "get_weather").effect(Effect::Read);
    /// # let _ = builder;
    /// ```
    pub fn effect(mut self, effect: Effect) -> Self {
        self.effect = Some(effect);
        self
    }

    /// Whether repeating a call changes nothing more (default: no).
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("cache.clear", "clear_cache").idempotent(true);
    /// # let _ = builder;
    /// ```
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = idempotent;
        self
    }

    /// Whether the tool reaches outside the application (default: no).
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("web.fetch", "fetch").open_world(true);
    /// # let _ = builder;
    /// ```
    pub fn open_world(mut self, open_world: bool) -> Self {
        self.open_world = open_world;
        self
    }

    /// Defers the tool (default: no): left out of a first tool list and
    /// found by a search. It is no permission: a deferred tool is called
    /// like any other.
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("ops.reindex", "reindex").defer(true);
    /// # let _ = builder;
    /// ```
    pub fn defer(mut self, defer: bool) -> Self {
        self.defer = defer;
        self
    }

    /// Words a search matches besides the tool's name, description and
    /// parameters: what a user would say for it.
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("ops.reindex", "reindex")
    ///     .search_hint("maintenance rebuild slow search");
    /// # let _ = builder;
    /// ```
    pub fn search_hint(mut self, hint: impl Into<String>) -> Self {
        self.search_hint = Some(hint.into());
        self
    }

    /// Tags that selectors and policy rules match (lowercase words).
    ///
    /// ```
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("crm.find", "find_customer").tags(["pii", "crm"]);
    /// # let _ = builder;
    /// ```
    pub fn tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.tags = tags.into_iter().map(Into::into).collect();
        self
    }

    /// The tool's own timeout (otherwise the executor's default).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("web.fetch", "fetch").timeout(Duration::from_secs(10));
    /// # let _ = builder;
    /// ```
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How many calls of the tool may run at once, across every front end
    /// (otherwise no limit of its own); see [`Concurrency`].
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use serde_json::json;
    /// use toolwright::{Effect, executor::Concurrency, registry::DynamicTool};
    ///
    /// let render = DynamicTool::builder("reports.render", "render_report")
    ///     .description("Render a report on the one rendering server.")
    ///     .effect(Effect::Read)
    ///     .concurrency(Concurrency::Limit(NonZeroU32::new(2).unwrap()))
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_| Box::pin(async { Ok(json!("report")) }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(render.entry().concurrency().to_string(), "at most 2 at once");
    /// ```
    pub fn concurrency(mut self, concurrency: Concurrency) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Cuts a result's text shown to a model past `chars` characters
    /// (otherwise the executor's default bound); the application still
    /// gets the whole value. Must be at least 1.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Effect, registry::DynamicTool};
    ///
    /// let fetch = DynamicTool::builder("web.fetch", "fetch_page")
    ///     .description("Fetch a web page as text.")
    ///     .effect(Effect::Read)
    ///     .max_result(20_000)
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_| Box::pin(async { Ok(json!("<html>")) }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(fetch.entry().max_result(), Some(20_000));
    /// ```
    pub fn max_result(mut self, chars: usize) -> Self {
        self.max_result = Some(chars);
        self
    }

    /// The JSON Schema (draft 2020-12) of the arguments, an object schema
    /// (required). Calls are validated against it in full.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("weather.get", "get_weather").input_schema(json!({
    ///     "type": "object",
    ///     "properties": {"city": {"type": "string"}},
    ///     "required": ["city"],
    /// }));
    /// # let _ = builder;
    /// ```
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// The JSON Schema of the result, when there is one.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::registry::DynamicTool;
    /// let builder = DynamicTool::builder("weather.get", "get_weather")
    ///     .output_schema(json!({"type": "object", "properties": {"celsius": {"type": "number"}}}));
    /// # let _ = builder;
    /// ```
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The `authorize` hook, over the caller's context `C`, asked on the
    /// validated arguments before every call (none: open to every caller).
    /// A caller whose context is not a `C` gets `CallError::ContextMismatch`.
    ///
    /// ```
    /// use toolwright::{Invocation, registry::{Arguments, DynamicTool}, executor::BoxFuture};
    ///
    /// struct Actor { admin: bool }
    ///
    /// fn admins<'a>(actor: &'a Actor, _: &'a Invocation<'a, Arguments>) -> BoxFuture<'a, bool> {
    ///     Box::pin(async move { actor.admin })
    /// }
    ///
    /// let builder = DynamicTool::builder("admin.wipe", "wipe").authorize(admins);
    /// # let _ = builder;
    /// ```
    pub fn authorize<C, H, V>(mut self, hook: H) -> Self
    where
        C: Any + Sync,
        H: for<'a> Fn(&'a C, &'a Invocation<'a, Arguments>) -> BoxFuture<'a, V>
            + Send
            + Sync
            + 'static,
        V: IntoVerdict + 'static,
    {
        self.authorize = Some(erase_hook(hook));
        self
    }

    /// The `approve` hook, asked on the exact arguments of every call of a
    /// `write` or `destructive` tool (required for those, refused for a
    /// `read` one, as for `#[tool]`).
    ///
    /// ```
    /// use toolwright::{Effect, Invocation, registry::{Arguments, DynamicTool}, executor::{BoxFuture, Verdict}};
    ///
    /// fn wait_for_a_person<'a>(_: &'a (), _: &'a Invocation<'a, Arguments>) -> BoxFuture<'a, Verdict> {
    ///     Box::pin(async { Verdict::Pending })
    /// }
    ///
    /// let builder = DynamicTool::builder("files.delete", "delete_file")
    ///     .effect(Effect::Destructive)
    ///     .approve(wait_for_a_person);
    /// # let _ = builder;
    /// ```
    pub fn approve<C, H, V>(mut self, hook: H) -> Self
    where
        C: Any + Sync,
        H: for<'a> Fn(&'a C, &'a Invocation<'a, Arguments>) -> BoxFuture<'a, V>
            + Send
            + Sync
            + 'static,
        V: IntoVerdict + 'static,
    {
        self.approve = Some(erase_hook(hook));
        self
    }

    /// What a call runs, on its validated arguments (required). An `Err`
    /// is the call's `CallError::Tool`, its source kept.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::registry::DynamicTool;
    ///
    /// let builder = DynamicTool::builder("math.double", "double").handler(|call| {
    ///     Box::pin(async move {
    ///         let n = call.arguments()["n"].as_i64().ok_or("`n` is not an integer")?;
    ///         Ok(json!(n * 2))
    ///     })
    /// });
    /// # let _ = builder;
    /// ```
    pub fn handler<F>(mut self, handler: F) -> Self
    where
        F: for<'a> Fn(DynamicCall<'a>) -> BoxFuture<'a, Result<Value, BoxError>>
            + Send
            + Sync
            + 'static,
    {
        self.handler = Some(Box::new(handler));
        self
    }

    /// The tool, or every problem with it.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::{Effect, registry::DynamicTool};
    ///
    /// let built = DynamicTool::builder("util.ping", "ping")
    ///     .description("Answer pong.")
    ///     .effect(Effect::Read)
    ///     .input_schema(json!({"type": "object"}))
    ///     .handler(|_| Box::pin(async { Ok(json!("pong")) }))
    ///     .build();
    /// assert!(built.is_ok());
    /// ```
    pub fn build(self) -> Result<DynamicTool, DynamicToolError> {
        let mut problems = Vec::new();
        if !is_valid_key(&self.key) {
            problems.push(DynamicToolProblem::InvalidKey {
                key: self.key.clone(),
            });
        }
        if !is_valid_name(&self.name) {
            problems.push(DynamicToolProblem::InvalidName {
                name: self.name.clone(),
            });
        }
        for tag in self.tags.iter().filter(|tag| !is_valid_tag(tag)) {
            problems.push(DynamicToolProblem::InvalidTag { tag: tag.clone() });
        }
        let description = match (self.description, &self.title) {
            (Some(description), _) => description,
            (None, Some(title)) => title.clone(),
            (None, None) => {
                problems.push(DynamicToolProblem::MissingDescription);
                String::new()
            }
        };
        if self.effect.is_none() {
            problems.push(DynamicToolProblem::MissingEffect);
        }
        if self.max_result == Some(0) {
            problems.push(DynamicToolProblem::ZeroMaxResult);
        }
        match &self.input_schema {
            None => problems.push(DynamicToolProblem::MissingInputSchema),
            Some(schema) => {
                if let Some(message) = input_schema_problem(schema) {
                    problems.push(DynamicToolProblem::InvalidSchema {
                        which: "input",
                        message,
                    });
                }
            }
        }
        if let Some(message) = self.output_schema.as_ref().and_then(schema_problem) {
            problems.push(DynamicToolProblem::InvalidSchema {
                which: "output",
                message,
            });
        }
        match (self.effect, &self.approve) {
            (Some(effect), None) if effect.requires_approval() => {
                problems.push(DynamicToolProblem::MissingApprove { effect });
            }
            (Some(Effect::Read), Some(_)) => problems.push(DynamicToolProblem::UnexpectedApprove),
            _ => {}
        }
        if self.handler.is_none() {
            problems.push(DynamicToolProblem::MissingHandler);
        }
        let (Some(effect), Some(input_schema), Some(handler), true) = (
            self.effect,
            self.input_schema,
            self.handler,
            problems.is_empty(),
        ) else {
            return Err(DynamicToolError { problems });
        };
        let mut tags: Vec<&'static str> = Vec::new();
        for tag in &self.tags {
            let tag = intern(tag);
            if !tags.contains(&tag) {
                tags.push(tag);
            }
        }
        let declared = Declared {
            key: ToolStr::from(self.key),
            name: ToolStr::from(self.name),
            title: self.title,
            description,
            effect,
            idempotent: self.idempotent,
            open_world: self.open_world,
            tags,
            timeout: self.timeout,
            concurrency: self.concurrency,
            max_result: self.max_result,
            defer: self.defer,
            search_hint: self.search_hint.filter(|hint| !hint.trim().is_empty()),
            location: self.location,
            input_schema,
            output_schema: self.output_schema,
        };
        let tool = Dynamic {
            authorize: self.authorize,
            approve: self.approve,
            handler,
        };
        Ok(DynamicTool {
            entry: ToolEntry::dynamic(declared, tool),
        })
    }
}

impl std::fmt::Debug for DynamicToolBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicToolBuilder")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("effect", &self.effect)
            .finish_non_exhaustive()
    }
}

/// What is wrong with `schema` as a tool's input schema, if anything: it
/// describes an object, and compiles.
pub(crate) fn input_schema_problem(schema: &Value) -> Option<String> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Some("an input schema describes an object (`\"type\": \"object\"`)".to_owned());
    }
    schema_problem(schema)
}

/// What is wrong with `schema` as a tool's JSON Schema, if anything.
fn schema_problem(schema: &Value) -> Option<String> {
    if !schema.is_object() {
        return Some("a schema is a JSON object".to_owned());
    }
    jsonschema::draft202012::new(schema)
        .err()
        .map(|error| error.to_string())
}

//! A catalog's tools as a provider's `tools` field: each tool's
//! definition, its schema in the provider's dialect.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::catalog::ToolEntry;
use crate::registry::Tools;

use super::Format;
use super::node::{Node, Object};
use super::schema;

/// A tool's schema uses a construct the provider cannot express.
///
/// Exporting fails instead of sending a schema the provider would reject, or
/// one that would let the model send what the executor refuses.
///
/// ```
/// use std::collections::HashMap;
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog};
///
/// /// Set labels.
/// #[tool(key = "labels.set", effect = read, authorize = public)]
/// async fn set_labels(labels: HashMap<String, String>) -> usize { labels.len() }
///
/// let catalog = Catalog::builder().register::<SetLabelsArgs>().build().unwrap();
/// let error = providers::export(&catalog, Format::OpenAiChat { strict: true }).unwrap_err();
/// assert_eq!((error.tool.as_str(), error.path.as_str()), ("set_labels", "/labels"));
/// // Without strict mode, a map is plain JSON Schema.
/// assert!(providers::export(&catalog, Format::OpenAiChat { strict: false }).is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool `{tool}` cannot be exported for {provider}: {path} is {construct}")]
pub struct ExportError {
    /// The tool's name.
    pub tool: String,
    /// The provider's dialect.
    pub provider: &'static str,
    /// The field, as a path into the arguments (`/address/zip`).
    pub path: String,
    /// What cannot be expressed.
    pub construct: String,
}

impl ExportError {
    pub(super) fn root(tool: &str, provider: &'static str) -> Self {
        ExportError {
            tool: tool.to_owned(),
            provider,
            path: "(arguments)".into(),
            construct: "not a JSON object schema".into(),
        }
    }
}

/// The provider's schema for one tool's arguments.
///
/// ```
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog};
///
/// /// Search.
/// #[tool(key = "docs.search", effect = read, authorize = public)]
/// async fn search(query: String, limit: Option<u8>) -> Vec<String> { vec![] }
///
/// let catalog = Catalog::builder().register::<SearchArgs>().build().unwrap();
/// let strict = providers::schema_for(catalog.get("search").unwrap(), Format::OpenAiChat { strict: true }).unwrap();
/// // Strict mode requires every property (in the order `serde_json` keeps them).
/// let required = strict["required"].as_array().unwrap();
/// assert!(required.contains(&"limit".into()) && required.contains(&"query".into()));
/// assert_eq!(strict["properties"]["limit"]["type"], serde_json::json!(["integer", "null"]));
/// ```
pub fn schema_for(tool: &ToolEntry, format: Format) -> Result<Value, ExportError> {
    schema_node(tool, format).map(Node::into_value)
}

fn schema_node(tool: &ToolEntry, format: Format) -> Result<Node<'_>, ExportError> {
    let canonical = tool.input_schema();
    match format {
        Format::OpenAiChat { strict: true } | Format::OpenAiResponses { strict: true } => {
            schema::openai_strict(tool.name(), canonical)
        }
        Format::Gemini => schema::gemini(tool.name(), canonical),
        _ => Ok(schema::standard(canonical)),
    }
}

/// One tool's definition in `format`.
///
/// A tool's `title`, for providers that have no field for it, goes in front
/// of the description (unless the description already starts with it).
///
/// ```
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog};
///
/// /// Ping a host.
/// #[tool(key = "net.ping", title = "Reachability check", effect = read, authorize = public)]
/// async fn ping(host: String) -> bool { !host.is_empty() }
///
/// let catalog = Catalog::builder().register::<PingArgs>().build().unwrap();
/// let tool = catalog.get("ping").unwrap();
/// let anthropic = providers::tool_definition(tool, Format::Anthropic).unwrap();
/// assert_eq!(anthropic["name"], "ping");
/// // Providers without a title field get it in front of the description.
/// assert_eq!(anthropic["description"], "Reachability check. Ping a host.");
/// assert_eq!(anthropic["input_schema"]["required"], serde_json::json!(["host"]));
/// ```
pub fn tool_definition(tool: &ToolEntry, format: Format) -> Result<Value, ExportError> {
    definition_node(tool, format).map(Node::into_value)
}

fn definition_node(tool: &ToolEntry, format: Format) -> Result<Node<'_>, ExportError> {
    let parameters = schema_node(tool, format)?;
    let description = match tool.title() {
        Some(title) if !tool.description().starts_with(title) => {
            Node::Made(format!("{title}. {}", tool.description()).into())
        }
        _ => Node::Str(tool.description()),
    };
    let name = Node::Str(tool.name());
    let object = |object| Node::Object(object);
    let mut definition = match format {
        Format::OpenAiChat { strict } => object(Object::of([
            ("type", Node::Str("function")),
            (
                "function",
                object(Object::of([
                    ("name", name),
                    ("description", description),
                    ("parameters", parameters),
                    ("strict", Node::Made(strict.into())),
                ])),
            ),
        ])),
        Format::OpenAiResponses { strict } => object(Object::of([
            ("type", Node::Str("function")),
            ("name", name),
            ("description", description),
            ("parameters", parameters),
            ("strict", Node::Made(strict.into())),
        ])),
        Format::Anthropic => object(Object::of([
            ("name", name),
            ("description", description),
            ("input_schema", parameters),
        ])),
        Format::Gemini => object(Object::of([
            ("name", name),
            ("description", description),
            ("parameters", parameters),
        ])),
        Format::GeminiJsonSchema => object(Object::of([
            ("name", name),
            ("description", description),
            ("parametersJsonSchema", parameters),
        ])),
    };
    // Where the format can keep a tool out of the prompt until a search
    // finds it; elsewhere a deferred tool goes out as any other.
    let defers = matches!(format, Format::OpenAiResponses { .. } | Format::Anthropic);
    if defers
        && tool.deferred()
        && let Node::Object(definition) = &mut definition
    {
        definition.insert("defer_loading", Node::Made(true.into()));
    }
    Ok(definition)
}

/// The request's `tools` field for `tools` (a whole catalog, or any subset
/// of its entries), in catalog order.
///
/// OpenAI and Anthropic get one definition per tool; Gemini gets one `Tool`
/// holding every `functionDeclaration`.
///
/// ```
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog, Effect};
///
/// /// Read.
/// #[tool(key = "notes.read", effect = read, authorize = public)]
/// async fn read_note(id: u64) -> String { String::new() }
///
/// let catalog = Catalog::builder().register::<ReadNoteArgs>().build().unwrap();
/// let reads = catalog.iter().filter(|t| t.effect() == Effect::Read);
/// let tools = providers::export(reads, Format::Gemini).unwrap();
/// assert_eq!(tools[0]["functionDeclarations"][0]["name"], "read_note");
/// ```
///
/// In [`Format::OpenAiResponses`], deferred tools go out inside an OpenAI
/// namespace named after their key's first segment (`notes` for
/// `notes.archive`), with a description naming its tools: until a tool
/// search loads its functions, the model reads only that. A function keeps
/// its name there, so a call's `name` alone still says which tool it is.
///
/// ```
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog};
///
/// /// Read a note.
/// #[tool(key = "notes.read", effect = read, authorize = public)]
/// async fn read_note(id: u64) -> String { String::new() }
///
/// /// Archive a note.
/// #[tool(key = "notes.archive", effect = read, authorize = public, defer)]
/// async fn archive_note(id: u64) -> bool { true }
///
/// let catalog = Catalog::builder()
///     .register::<ReadNoteArgs>()
///     .register::<ArchiveNoteArgs>()
///     .build()
///     .unwrap();
/// let tools = providers::export(&catalog, Format::OpenAiResponses { strict: true }).unwrap();
/// // In key order: `notes.archive`, then `notes.read`.
/// assert_eq!(tools[0]["type"], "namespace");
/// assert_eq!(tools[0]["name"], "notes");
/// assert_eq!(tools[0]["description"], "The notes tools: archive_note.");
/// assert_eq!(tools[0]["tools"][0]["name"], "archive_note");
/// assert_eq!(tools[0]["tools"][0]["defer_loading"], true);
/// assert_eq!(tools[1]["name"], "read_note", "listed up front: a function");
/// ```
pub fn export<'a>(
    tools: impl IntoIterator<Item = &'a ToolEntry>,
    format: Format,
) -> Result<Value, ExportError> {
    // One tool at a time: each definition's tree is gone before the next
    // is built, so the export's memory is the result's.
    let tools: Vec<&ToolEntry> = tools.into_iter().collect();
    let definitions = tools
        .iter()
        .map(|tool| definition_node(tool, format).map(Node::into_value))
        .collect::<Result<Vec<_>, _>>()?;
    let definitions = grouped(&tools, definitions, format)
        .into_iter()
        .map(Listed::into_value)
        .collect();
    let mut definitions = Value::Array(definitions);
    if format.is_gemini() {
        // Moved in: `json!` would copy it through `Serialize`.
        let mut tool = Map::new();
        tool.insert("functionDeclarations".to_owned(), definitions);
        definitions = Value::Array(vec![Value::Object(tool)]);
    }
    Ok(definitions)
}

/// [`export`], written as JSON text: the same document, without building
/// it as a tree of `Value`s first, which costs more than the transform.
///
/// For a request body you serialize yourself: a `RawValue` in a
/// `#[derive(Serialize)]` struct is written out as it is (`serde_json::json!`
/// would parse it back into a `Value`).
///
/// ```
/// use serde::Serialize;
/// use serde_json::value::RawValue;
/// use toolwright::providers::{self, Format};
/// use toolwright::{tool, Catalog};
///
/// /// Read a note.
/// #[tool(key = "notes.read", effect = read, authorize = public)]
/// async fn read_note(id: u64) -> String { String::new() }
///
/// #[derive(Serialize)]
/// struct Request<'a> {
///     model: &'a str,
///     tools: &'a RawValue,
/// }
///
/// let catalog = Catalog::builder().register::<ReadNoteArgs>().build().unwrap();
/// let format = Format::OpenAiChat { strict: true };
/// let tools = providers::export_json(&catalog, format).unwrap();
/// let body = serde_json::to_string(&Request { model: "gpt-5", tools: &tools }).unwrap();
/// assert!(body.starts_with(r#"{"model":"gpt-5","tools":[{"function":{"description":"Read a note.""#));
///
/// // The same document as `export` builds.
/// let text: serde_json::Value = serde_json::from_str(tools.get()).unwrap();
/// assert_eq!(text, providers::export(&catalog, format).unwrap());
/// ```
pub fn export_json<'a>(
    tools: impl IntoIterator<Item = &'a ToolEntry>,
    format: Format,
) -> Result<Box<RawValue>, ExportError> {
    let tools: Vec<&ToolEntry> = tools.into_iter().collect();
    let written = written(&tools, format, threads_for(tools.len()))?;
    let listed = grouped(&tools, written, format);
    // Not `RawValue::from_string`, which would parse the text again.
    Ok(wrapped(&listed, format).expect("an export is plain JSON"))
}

/// The most tool names a generated namespace description lists.
const NAMES_DESCRIBED: usize = 8;

/// An entry of a `tools` list: one tool's definition, or (OpenAI
/// Responses) a namespace holding the definitions of some.
enum Listed<T> {
    Tool(T),
    Namespace {
        name: String,
        description: String,
        tools: Vec<T>,
    },
}

impl Listed<Value> {
    /// The entry as a `Value`, written as [`Serialize`] writes it.
    fn into_value(self) -> Value {
        match self {
            Listed::Tool(definition) => definition,
            namespace => serde_json::to_value(&namespace).expect("an export is plain JSON"),
        }
    }
}

impl<T: Serialize> Serialize for Listed<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        match self {
            Listed::Tool(definition) => definition.serialize(serializer),
            Listed::Namespace {
                name,
                description,
                tools,
            } => {
                let mut map = serializer.serialize_map(Some(4))?;
                map.serialize_entry("type", "namespace")?;
                map.serialize_entry("name", name)?;
                map.serialize_entry("description", description)?;
                map.serialize_entry("tools", tools)?;
                map.end()
            }
        }
    }
}

/// The OpenAI namespace a tool goes out in: for [`Format::OpenAiResponses`],
/// a deferred tool's key's first segment (`github` for
/// `github.create_issue`), as OpenAI recommends for tool search: the model
/// reads a namespace's name and description until a search loads the
/// functions in it. Tools listed up front stay top-level functions.
fn openai_namespace(tool: &ToolEntry, format: Format) -> Option<&str> {
    let responses = matches!(format, Format::OpenAiResponses { .. });
    let (namespace, _) = tool.key().split_once('.')?;
    (responses && tool.deferred()).then_some(namespace)
}

/// `definitions` (one per tool of `tools`, in order) as `format`'s list:
/// each in its OpenAI namespace, which takes the place of its first tool,
/// or on its own.
fn grouped<T>(tools: &[&ToolEntry], definitions: Vec<T>, format: Format) -> Vec<Listed<T>> {
    let mut listed: Vec<Listed<T>> = Vec::with_capacity(definitions.len());
    // Each namespace's place in `listed`, and its tools' names.
    let mut namespaces: HashMap<&str, (usize, Vec<&str>)> = HashMap::new();
    for (tool, definition) in tools.iter().zip(definitions) {
        let Some(namespace) = openai_namespace(tool, format) else {
            listed.push(Listed::Tool(definition));
            continue;
        };
        let (at, names) = namespaces.entry(namespace).or_insert_with(|| {
            listed.push(Listed::Namespace {
                name: namespace.to_owned(),
                description: String::new(),
                tools: Vec::new(),
            });
            (listed.len() - 1, Vec::new())
        });
        names.push(tool.name());
        if let Listed::Namespace { tools, .. } = &mut listed[*at] {
            tools.push(definition);
        }
    }
    for (namespace, (at, names)) in namespaces {
        if let Listed::Namespace { description, .. } = &mut listed[at] {
            *description = namespace_description(namespace, &names);
        }
    }
    listed
}

/// What a namespace's description says: what it holds, by its tools'
/// names (the first [`NAMES_DESCRIBED`]), for a model deciding whether
/// to search it.
fn namespace_description(namespace: &str, names: &[&str]) -> String {
    let shown = names[..names.len().min(NAMES_DESCRIBED)].join(", ");
    match names.len().saturating_sub(NAMES_DESCRIBED) {
        0 => format!("The {namespace} tools: {shown}."),
        more => format!("The {namespace} tools: {shown} and {more} more."),
    }
}

/// `definitions` as the document `format` wants: the array itself, or for
/// Gemini one `Tool` holding it.
fn wrapped<T: Serialize>(definitions: &T, format: Format) -> serde_json::Result<Box<RawValue>> {
    if format.is_gemini() {
        serde_json::value::to_raw_value(&[BTreeMap::from([("functionDeclarations", definitions)])])
    } else {
        serde_json::value::to_raw_value(definitions)
    }
}

/// Tools a thread of [`written`] takes at the least: below this, the
/// thread would cost more to start than it saves (a definition takes a few
/// microseconds, most of it building the tool's schema the first time).
const TOOLS_PER_THREAD: usize = 128;

/// How many threads write an export of `tools` definitions: one, unless
/// the list is long enough to share among the machine's cores. A server
/// with thousands of tools builds every schema for its first list; that
/// start-up is what this shortens.
fn threads_for(tools: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.min(tools / TOOLS_PER_THREAD).max(1)
}

/// Each definition of `tools` written as text, by `threads` threads taking
/// a run of tools each, in order (by this one alone when `threads` is 1).
/// The first tool that cannot be exported, in the list's order, is the
/// error, however many threads wrote them.
fn written(
    tools: &[&ToolEntry],
    format: Format,
    threads: usize,
) -> Result<Vec<Box<RawValue>>, ExportError> {
    let write = |run: &[&ToolEntry]| -> Result<Vec<Box<RawValue>>, ExportError> {
        run.iter()
            .map(|tool| {
                let definition = definition_node(tool, format)?;
                Ok(serde_json::value::to_raw_value(&definition).expect("an export is plain JSON"))
            })
            .collect()
    };
    if threads <= 1 {
        return write(tools);
    }
    let run = tools.len().div_ceil(threads);
    let mut written = Vec::with_capacity(tools.len());
    std::thread::scope(|scope| {
        let mut runs = tools.chunks(run);
        let first = runs.next().unwrap_or_default();
        let others: Vec<_> = runs.map(|run| scope.spawn(move || write(run))).collect();
        // This thread writes the first run while the others write theirs.
        written.extend(write(first)?);
        for other in others {
            let run = other
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            written.extend(run?);
        }
        Ok(written)
    })
}

impl Tools {
    /// [`export_json`] of these tools for `format`, built once per registry
    /// generation and view, then shared: exporting an unchanged view again
    /// (every turn of a conversation) costs a lookup. After any change to
    /// the registry the next export builds it anew.
    ///
    /// ```
    /// use toolwright::providers::Format;
    /// use toolwright::{tool, Catalog, Container, Effect, Executor, registry::Selector};
    ///
    /// /// Read a note.
    /// #[tool(key = "notes.read", effect = read, authorize = public)]
    /// async fn read_note(id: u64) -> String { String::new() }
    ///
    /// let catalog = Catalog::builder().register::<ReadNoteArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let guest = executor.view(Selector::effect(Effect::Read));
    ///
    /// let format = Format::Anthropic;
    /// let first = guest.tools().export(format).unwrap();
    /// let again = guest.tools().export(format).unwrap();
    /// assert!(std::sync::Arc::ptr_eq(&first, &again), "the same text, not rebuilt");
    /// assert!(first.get().contains(r#""name":"read_note""#));
    /// ```
    pub fn export(&self, format: Format) -> Result<Arc<RawValue>, ExportError> {
        let what = Format::ALL.iter().position(|f| *f == format).unwrap_or(0) as u64;
        let text = self.memoized(what, |tools| {
            export_json(tools, format).map(Arc::<RawValue>::from)
        })?;
        Ok(Arc::clone(&text))
    }
}

/// The named tools of `tools`, in the order given, for [`export`]; the
/// first name it does not serve (unknown, disabled or outside its view) is
/// the error.
///
/// ```
/// use toolwright::{tool, Catalog, Container, Executor};
/// use toolwright::providers::select;
///
/// /// Ping.
/// #[tool(key = "net.ping", effect = read, authorize = public)]
/// async fn ping() -> bool { true }
///
/// let catalog = Catalog::builder().register::<PingArgs>().build().unwrap();
/// let tools = Executor::new(catalog, Container::default()).unwrap().tools();
/// assert_eq!(select(&tools, ["ping"]).unwrap().len(), 1);
/// let error = select(&tools, ["ping", "pong"]).unwrap_err();
/// assert_eq!(error.name, "pong");
/// assert_eq!(error.to_string(), "no tool named `pong` is served");
/// ```
pub fn select<I, S>(tools: &Tools, names: I) -> Result<Vec<&ToolEntry>, UnknownTool>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    names
        .into_iter()
        .map(|name| {
            let name = name.as_ref();
            tools.get(name).ok_or_else(|| UnknownTool {
                name: name.to_owned(),
            })
        })
        .collect()
}

/// A name [`select`] did not find among the tools served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no tool named `{name}` is served")]
#[non_exhaustive]
pub struct UnknownTool {
    /// The name asked for.
    pub name: String,
}

//! One catalog, four model APIs: tool lists, tool calls and tool results for
//! OpenAI (Chat Completions and Responses), Anthropic Messages and Gemini.
//!
//! The round trip, with no glue in the application:
//!
//! ```
//! use serde_json::json;
//! use toolwright::providers::{self, Format};
//! use toolwright::{tool, Catalog, Container, Executor};
//!
//! /// Add two numbers.
//! #[tool(key = "math.add", effect = read, authorize = public)]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
//! let executor = Executor::new(catalog, Container::default()).unwrap();
//!
//! // 1. The `tools` field of the request: what this executor will run.
//! let tools = providers::export(&executor.tools(), Format::OpenAiChat { strict: true }).unwrap();
//! assert_eq!(tools[0]["function"]["name"], "add");
//!
//! // 2. The model's answer, parsed into calls.
//! let response = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
//!     {"id": "call_1", "type": "function",
//!      "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}
//! ]}}]});
//! let calls = providers::parse_calls(&response, Format::OpenAiChat { strict: true }).unwrap();
//!
//! // 3. Every call through the executor's one pipeline, in order.
//! let outcomes = executor.run_calls(calls, &()).await;
//!
//! // 4. The messages to send back.
//! let messages = providers::result_messages(&outcomes, Format::OpenAiChat { strict: true });
//! assert_eq!(messages[0], json!({"role": "tool", "tool_call_id": "call_1", "content": "5"}));
//! # }
//! ```

mod node;
mod schema;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use serde::ser::{Error as _, Serialize, SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use node::{Node, Object};

use crate::catalog::ToolEntry;
use crate::content;
use crate::effect::Effect;
use crate::error::CallError;
use crate::executor::{Executor, Found};
use crate::registry::Tools;
use crate::util::excerpt::{Excerpt, QUOTED_CHARS, result_text};

pub(crate) use schema::strip_absent_nulls;

/// A model API's wire format.
///
/// ```
/// use toolwright::providers::Format;
///
/// let format: Format = "openai-strict".parse().unwrap();
/// assert_eq!(format, Format::OpenAiChat { strict: true });
/// assert_eq!(Format::Gemini.to_string(), "gemini");
/// assert_eq!(Format::ALL.len(), 7);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// OpenAI Chat Completions: `{"type": "function", "function": {...}}`.
    /// With `strict`, schemas follow Structured Outputs' rules.
    OpenAiChat {
        /// Export for `strict: true`.
        strict: bool,
    },
    /// OpenAI Responses: `{"type": "function", "name", ...}`.
    OpenAiResponses {
        /// Export for `strict: true`.
        strict: bool,
    },
    /// Anthropic Messages: `{"name", "description", "input_schema"}`.
    Anthropic,
    /// Gemini `functionDeclarations` with `parameters` (OpenAPI 3.0 subset).
    Gemini,
    /// Gemini `functionDeclarations` with `parametersJsonSchema` (JSON Schema).
    GeminiJsonSchema,
}

impl Format {
    /// Every format, for listings and tests.
    pub const ALL: [Format; 7] = [
        Format::OpenAiChat { strict: false },
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: false },
        Format::OpenAiResponses { strict: true },
        Format::Anthropic,
        Format::Gemini,
        Format::GeminiJsonSchema,
    ];

    /// Gemini's formats, which hold every declaration in one `Tool`.
    fn is_gemini(self) -> bool {
        matches!(self, Format::Gemini | Format::GeminiJsonSchema)
    }

    fn is_openai(self) -> bool {
        matches!(
            self,
            Format::OpenAiChat { .. } | Format::OpenAiResponses { .. }
        )
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::OpenAiChat { strict: false } => "openai",
            Format::OpenAiChat { strict: true } => "openai-strict",
            Format::OpenAiResponses { strict: false } => "openai-responses",
            Format::OpenAiResponses { strict: true } => "openai-responses-strict",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::GeminiJsonSchema => "gemini-json-schema",
        })
    }
}

/// The name is not one of [`Format`]'s.
///
/// ```
/// use toolwright::providers::{Format, UnknownFormat};
///
/// let error = "openai-v2".parse::<Format>().unwrap_err();
/// assert_eq!(error, UnknownFormat("openai-v2".into()));
/// assert!(error.to_string().contains("anthropic"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown format `{0}`; use openai, openai-strict, openai-responses, openai-responses-strict, anthropic, gemini or gemini-json-schema"
)]
pub struct UnknownFormat(pub String);

impl std::str::FromStr for Format {
    type Err = UnknownFormat;

    /// Parses the names [`Format`] displays as.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.to_string() == s)
            .ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

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
    fn root(tool: &str, provider: &'static str) -> Self {
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
    Ok(match format {
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
    })
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
pub fn export<'a>(
    tools: impl IntoIterator<Item = &'a ToolEntry>,
    format: Format,
) -> Result<Value, ExportError> {
    // One tool at a time: each definition's tree is gone before the next
    // is built, so the export's memory is the result's.
    let definitions = tools
        .into_iter()
        .map(|tool| definition_node(tool, format).map(Node::into_value))
        .collect::<Result<Vec<_>, _>>()?;
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
    let definitions = Definitions {
        tools: tools.into_iter().collect(),
        format,
        failed: RefCell::new(None),
    };
    // Not `RawValue::from_string`, which would parse the text again.
    let written = if format.is_gemini() {
        serde_json::value::to_raw_value(&[BTreeMap::from([("functionDeclarations", &definitions)])])
    } else {
        serde_json::value::to_raw_value(&definitions)
    };
    match definitions.failed.into_inner() {
        Some(error) => Err(error),
        None => Ok(written.expect("an export is plain JSON")),
    }
}

impl Tools {
    /// [`export_json`] of these tools for `format`, built once per registry
    /// generation and view, then shared: exporting an unchanged view again
    /// (every turn of a conversation) costs a lookup. After any change to
    /// the registry the next export builds it anew.
    ///
    /// ```
    /// use toolwright::providers::Format;
    /// use toolwright::{tool, Catalog, Container, Effect, Executor, Selector};
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

/// The definitions of `tools` as a JSON array, each built, written and
/// dropped in turn. A definition that cannot be built ends the writing;
/// its error waits in `failed`.
struct Definitions<'a> {
    tools: Vec<&'a ToolEntry>,
    format: Format,
    failed: RefCell<Option<ExportError>>,
}

impl Serialize for Definitions<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.tools.len()))?;
        for tool in &self.tools {
            match definition_node(tool, self.format) {
                Ok(definition) => seq.serialize_element(&definition)?,
                Err(error) => {
                    let message = error.to_string();
                    *self.failed.borrow_mut() = Some(error);
                    return Err(S::Error::custom(message));
                }
            }
        }
        seq.end()
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

/// The arguments of a tool call were not a JSON object.
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{self, Format, MalformedArguments};
///
/// let response = json!({"output": [{"type": "function_call", "call_id": "c1",
///                                   "name": "ping", "arguments": "{\"host\": "}]});
/// let calls = providers::parse_calls(&response, Format::OpenAiResponses { strict: true }).unwrap();
/// let MalformedArguments(why) = calls[0].arguments.clone().unwrap_err();
/// assert!(why.starts_with("invalid JSON"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the arguments are not a JSON object: {0}")]
pub struct MalformedArguments(pub String);

/// One tool call of a model turn, whatever the provider.
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{self, Format};
///
/// let response = json!({"content": [
///     {"type": "text", "text": "Let me look."},
///     {"type": "tool_use", "id": "toolu_1", "name": "ping", "input": {"host": "example.org"}}
/// ]});
/// let calls = providers::parse_calls(&response, Format::Anthropic).unwrap();
/// assert_eq!(calls.len(), 1);
/// assert_eq!((calls[0].id.as_str(), calls[0].name.as_str()), ("toolu_1", "ping"));
/// assert_eq!(calls[0].arguments, Ok(json!({"host": "example.org"})));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The provider's id for the call (synthesized, stably, where the
    /// provider gives none).
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, or why they could not be read.
    pub arguments: Result<Value, MalformedArguments>,
    /// Where the call came from: OpenAI strict mode sends `null` for absent.
    format: Option<Format>,
}

impl ToolCall {
    /// A call with JSON arguments, as an application builds one by hand.
    ///
    /// ```
    /// use toolwright::providers::ToolCall;
    /// let call = ToolCall::new("call_1", "add", serde_json::json!({"a": 1, "b": 2}));
    /// assert_eq!(call.name, "add");
    /// ```
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Ok(arguments),
            format: None,
        }
    }

    fn parsed(
        format: Format,
        id: String,
        name: String,
        arguments: Result<Value, MalformedArguments>,
    ) -> Self {
        ToolCall {
            id,
            name,
            arguments: arguments.and_then(|a| {
                if a.is_object() {
                    Ok(a)
                } else {
                    Err(MalformedArguments(format!("got {}", kind(&a))))
                }
            }),
            format: Some(format),
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The model's response does not have the provider's shape.
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{self, Format};
///
/// let error = providers::parse_calls(&json!({"choices": 3}), Format::Gemini).unwrap_err();
/// assert_eq!(error.format, Format::Gemini);
/// assert_eq!(error.to_string(), "not a gemini response: no `candidates`");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a {format} response: {reason}")]
pub struct ParseError {
    /// The format that was expected.
    pub format: Format,
    /// What was missing or wrong.
    pub reason: String,
}

/// Every tool call in a model's response, in order.
///
/// Accepts the whole response body (or, for OpenAI Chat, a single message;
/// for Anthropic, the `content` array). Arguments that are not valid JSON or
/// not an object make that one call's [`ToolCall::arguments`] an error; the
/// other calls are unaffected.
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{self, Format};
///
/// let response = json!({"candidates": [{"content": {"role": "model", "parts": [
///     {"functionCall": {"name": "ping", "args": {"host": "a"}}},
///     {"functionCall": {"name": "ping", "args": {"host": "b"}}}
/// ]}}]});
/// let calls = providers::parse_calls(&response, Format::Gemini).unwrap();
/// let hosts: Vec<_> = calls.iter().map(|c| c.arguments.as_ref().unwrap()["host"].clone()).collect();
/// assert_eq!(hosts, [json!("a"), json!("b")]);
/// // Gemini gave no ids: synthesized ones are distinct and stable.
/// assert_ne!(calls[0].id, calls[1].id);
/// ```
pub fn parse_calls(response: &Value, format: Format) -> Result<Vec<ToolCall>, ParseError> {
    let fail = |reason: &str| ParseError {
        format,
        reason: reason.to_owned(),
    };
    match format {
        Format::OpenAiChat { .. } => {
            let messages: Vec<&Value> = match response.get("choices").and_then(Value::as_array) {
                Some(choices) => choices.iter().filter_map(|c| c.get("message")).collect(),
                None if response.get("role").is_some() => vec![response],
                None => return Err(fail("no `choices`")),
            };
            let mut calls = Vec::new();
            for message in messages {
                for call in message
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let function = call
                        .get("function")
                        .ok_or_else(|| fail("a tool call without `function`"))?;
                    calls.push(ToolCall::parsed(
                        format,
                        string_field(call, "id").ok_or_else(|| fail("a tool call without `id`"))?,
                        string_field(function, "name")
                            .ok_or_else(|| fail("a function without `name`"))?,
                        json_string_arguments(function.get("arguments")),
                    ));
                }
            }
            Ok(calls)
        }
        Format::OpenAiResponses { .. } => {
            let output = response
                .get("output")
                .and_then(Value::as_array)
                .ok_or_else(|| fail("no `output`"))?;
            output
                .iter()
                .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
                .map(|item| {
                    Ok(ToolCall::parsed(
                        format,
                        string_field(item, "call_id")
                            .ok_or_else(|| fail("a function call without `call_id`"))?,
                        string_field(item, "name")
                            .ok_or_else(|| fail("a function call without `name`"))?,
                        json_string_arguments(item.get("arguments")),
                    ))
                })
                .collect()
        }
        Format::Anthropic => {
            let content = match response {
                Value::Array(_) => response,
                _ => response
                    .get("content")
                    .ok_or_else(|| fail("no `content`"))?,
            };
            content
                .as_array()
                .ok_or_else(|| fail("`content` is not an array"))?
                .iter()
                .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
                .map(|block| {
                    Ok(ToolCall::parsed(
                        format,
                        string_field(block, "id")
                            .ok_or_else(|| fail("a tool_use block without `id`"))?,
                        string_field(block, "name")
                            .ok_or_else(|| fail("a tool_use block without `name`"))?,
                        Ok(block.get("input").cloned().unwrap_or_else(|| json!({}))),
                    ))
                })
                .collect()
        }
        Format::Gemini | Format::GeminiJsonSchema => {
            let candidates = response
                .get("candidates")
                .and_then(Value::as_array)
                .ok_or_else(|| fail("no `candidates`"))?;
            let mut calls = Vec::new();
            for (c, candidate) in candidates.iter().enumerate() {
                let parts = candidate
                    .pointer("/content/parts")
                    .and_then(Value::as_array);
                for (p, part) in parts.into_iter().flatten().enumerate() {
                    let Some(call) = part.get("functionCall") else {
                        continue;
                    };
                    let name = string_field(call, "name")
                        .ok_or_else(|| fail("a functionCall without `name`"))?;
                    // Gemini ids are optional; a synthesized one is stable for
                    // the same response.
                    let id = string_field(call, "id")
                        .unwrap_or_else(|| format!("gemini-{c}-{p}-{name}"));
                    calls.push(ToolCall::parsed(
                        format,
                        id,
                        name,
                        Ok(call.get("args").cloned().unwrap_or_else(|| json!({}))),
                    ));
                }
            }
            Ok(calls)
        }
    }
}

fn string_field(value: &Value, key: &str) -> Option<String> {
    value.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// OpenAI sends arguments as a JSON *string*.
fn json_string_arguments(arguments: Option<&Value>) -> Result<Value, MalformedArguments> {
    match arguments {
        Some(Value::String(text)) if text.trim().is_empty() => Ok(json!({})),
        Some(Value::String(text)) => serde_json::from_str(text)
            .map_err(|e| MalformedArguments(format!("invalid JSON ({e})"))),
        Some(other) => Ok(other.clone()),
        None => Ok(json!({})),
    }
}

/// One call of a batch and how it ended.
///
/// ```
/// use serde_json::json;
/// use toolwright::CallError;
/// use toolwright::providers::CallOutcome;
///
/// let ok = CallOutcome::new("c1", "ping", Ok(json!(true)));
/// assert!(!ok.is_error());
/// assert_eq!(ok.model_text(), "true");
///
/// let denied = CallOutcome::new("c2", "ping", Err(CallError::Denied { key: "net.ping" }));
/// assert!(denied.is_error());
/// assert_eq!(denied.model_text(), "You are not allowed to call this tool.");
/// ```
#[derive(Debug)]
pub struct CallOutcome {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The result, whole, with the full error for the application.
    pub result: Result<Value, CallError>,
    /// At most how many characters of the result the model is shown.
    max_result: usize,
    /// Whether the result is [`Contents`](crate::Contents) blocks, shown as
    /// their text.
    contents: bool,
}

impl CallOutcome {
    /// The outcome of call `id` of tool `name`, its result shown to a model
    /// up to [`DEFAULT_MAX_RESULT`](crate::DEFAULT_MAX_RESULT) characters.
    /// [`Executor::run_calls`] gives each outcome its tool's bound instead.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::CallOutcome;
    ///
    /// // The result of a call the application answered itself.
    /// let outcome = CallOutcome::new("call_9", "weather", Ok(json!("sunny")));
    /// assert_eq!((outcome.id.as_str(), outcome.model_text().as_str()), ("call_9", "sunny"));
    /// ```
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        result: Result<Value, CallError>,
    ) -> Self {
        CallOutcome {
            id: id.into(),
            name: name.into(),
            result,
            max_result: crate::DEFAULT_MAX_RESULT,
            contents: false,
        }
    }

    /// The same outcome, its result shown to a model up to `chars`
    /// characters.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::CallOutcome;
    ///
    /// let outcome = CallOutcome::new("c", "n", Ok(json!("abcdef"))).with_max_result(2);
    /// assert_eq!(outcome.model_text(), "ab…[4 more characters]");
    /// assert_eq!(outcome.max_result(), 2);
    /// ```
    pub fn with_max_result(mut self, chars: usize) -> Self {
        self.max_result = chars;
        self
    }

    /// At most how many characters of the result the model is shown.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::CallOutcome;
    ///
    /// let outcome = CallOutcome::new("c", "n", Ok(json!(1)));
    /// assert_eq!(outcome.max_result(), toolwright::DEFAULT_MAX_RESULT);
    /// ```
    pub fn max_result(&self) -> usize {
        self.max_result
    }

    /// Whether the call failed.
    ///
    /// ```
    /// use toolwright::CallError;
    /// use toolwright::providers::CallOutcome;
    ///
    /// let outcome =
    ///     CallOutcome::new("c1", "ping", Err(CallError::UnknownTool { name: "ping".into() }));
    /// assert!(outcome.is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.result.is_err()
    }

    /// What the model may read: the result as JSON text (a string as it
    /// is), or a safe message (see [`model_message`]). A result longer than
    /// [`max_result`](Self::max_result) characters is cut there, followed by
    /// a marker that says how many more there were; [`result`](Self::result)
    /// keeps it whole.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::CallOutcome;
    ///
    /// // Strings go as they are; other values as JSON.
    /// let text = CallOutcome::new("c", "n", Ok(json!("15 degrees")));
    /// assert_eq!(text.model_text(), "15 degrees");
    /// let object = CallOutcome::new("c", "n", Ok(json!({"t": 15})));
    /// assert_eq!(object.model_text(), r#"{"t":15}"#);
    ///
    /// let long = CallOutcome::new("c", "n", Ok(json!([1, 2, 3, 4]))).with_max_result(4);
    /// assert_eq!(long.model_text(), "[1,2…[5 more characters]");
    /// assert_eq!(long.result.unwrap(), json!([1, 2, 3, 4]));
    /// ```
    pub fn model_text(&self) -> String {
        self.shown().0
    }

    /// What the model is shown, and whether it was cut.
    fn shown(&self) -> (String, bool) {
        match &self.result {
            Ok(value) => match self.contents.then(|| content::model_text(value)).flatten() {
                Some(text) => result_text(&Value::String(text), self.max_result),
                None => result_text(value, self.max_result),
            },
            Err(error) => (model_message(error), false),
        }
    }
}

/// What the model is told about a failed call; see [`CallError::model_message`].
///
/// ```
/// use toolwright::CallError;
/// use toolwright::providers::model_message;
///
/// let panicked = CallError::Panicked { key: "orders.place", message: "index out of bounds".into() };
/// assert_eq!(model_message(&panicked), "The tool failed.");
/// ```
pub fn model_message(error: &CallError) -> String {
    error.model_message()
}

/// The messages that return `outcomes` to the model, in order.
///
/// - OpenAI Chat: one `{"role": "tool", ...}` message per call.
/// - OpenAI Responses: one `function_call_output` input item per call.
/// - Anthropic: one `tool_result` block per call; send them together as the
///   `content` of a single `user` message.
/// - Gemini: one `functionResponse` part per call; send them together as the
///   `parts` of a single `user` content.
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{self, CallOutcome, Format};
///
/// let outcomes = [
///     CallOutcome::new("toolu_1", "ping", Ok(json!(true))),
///     CallOutcome::new("toolu_2", "ping", Ok(json!(false))),
/// ];
/// let blocks = providers::result_messages(&outcomes, Format::Anthropic);
/// // Anthropic: all blocks in one user message.
/// let message = json!({"role": "user", "content": blocks});
/// assert_eq!(message["content"][1]["tool_use_id"], "toolu_2");
/// ```
pub fn result_messages(outcomes: &[CallOutcome], format: Format) -> Vec<Value> {
    outcomes.iter().map(|o| result_message(o, format)).collect()
}

/// The message that returns one outcome to the model: its
/// [`model_text`](CallOutcome::model_text), cut past the outcome's
/// [`max_result`](CallOutcome::max_result). Gemini takes the result as a
/// JSON value: it gets the value itself, or the cut text when the value's
/// text is too long.
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{self, CallOutcome, Format};
///
/// let outcome = CallOutcome::new("call_1", "ping", Ok(json!(true)));
/// assert_eq!(
///     providers::result_message(&outcome, Format::OpenAiResponses { strict: true }),
///     json!({"type": "function_call_output", "call_id": "call_1", "output": "true"})
/// );
/// ```
pub fn result_message(outcome: &CallOutcome, format: Format) -> Value {
    let (text, cut) = outcome.shown();
    match format {
        Format::OpenAiChat { .. } => json!({
            "role": "tool",
            "tool_call_id": outcome.id,
            "content": text,
        }),
        Format::OpenAiResponses { .. } => json!({
            "type": "function_call_output",
            "call_id": outcome.id,
            "output": text,
        }),
        Format::Anthropic => {
            let mut block = json!({
                "type": "tool_result",
                "tool_use_id": outcome.id,
                "content": text,
            });
            if outcome.is_error() {
                block["is_error"] = Value::Bool(true);
            }
            block
        }
        Format::Gemini | Format::GeminiJsonSchema => {
            // The value as it is, unless it had to be cut: then the text.
            let response = match &outcome.result {
                Ok(value) if !cut => json!({ "result": value }),
                Ok(_) => json!({ "result": text }),
                Err(_) => json!({ "error": text }),
            };
            let mut function_response = Map::new();
            if !outcome.id.starts_with("gemini-") {
                function_response.insert("id".into(), Value::String(outcome.id.clone()));
            }
            // Every catalog name fits; a longer one is an unknown tool's,
            // not worth echoing whole.
            let name = Excerpt::prefix(&outcome.name, QUOTED_CHARS).to_string();
            function_response.insert("name".into(), Value::String(name));
            function_response.insert("response".into(), response);
            json!({ "functionResponse": function_response })
        }
    }
}

/// How many `read` calls of one batch run at once, unless told otherwise.
pub const DEFAULT_CONCURRENCY: usize = 8;

impl Executor {
    /// Runs the calls of one model turn through the pipeline, reads at most
    /// [`DEFAULT_CONCURRENCY`] at a time, and returns their outcomes in the
    /// calls' order. One call failing (even panicking) never cancels
    /// another, nor keeps a later one from running.
    ///
    /// # Order
    ///
    /// Every name is looked up when the returned future is first polled;
    /// the calls then run in the order the model gave them, in steps:
    ///
    /// - a call of a `write` or `destructive` tool runs alone: it starts
    ///   only after every earlier call of the batch has finished, and no
    ///   later call starts before it has finished. Writes therefore happen
    ///   one at a time, in the model's order, and a call the model put after
    ///   a write sees what the write did;
    /// - consecutive calls of `read` tools run concurrently, at most
    ///   [`DEFAULT_CONCURRENCY`] (or
    ///   [`run_calls_with_limit`](Self::run_calls_with_limit)'s `limit`) at
    ///   once, started in order. A call refused at lookup
    ///   (unknown, disabled, outside the view) runs nothing and counts as
    ///   a read.
    ///
    /// The order holds within one batch. Calls of other batches and other
    /// callers are not ordered with it; a tool's `concurrency` and
    /// `exclusive` limits hold across all of them.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolwright::providers::ToolCall;
    /// use toolwright::{tool, Catalog, Container, Context, Executor, Invocation};
    ///
    /// #[derive(Clone, Default)]
    /// struct Session { log: Arc<Mutex<Vec<String>>> }
    ///
    /// /// Read the balance.
    /// #[tool(key = "bank.balance", effect = read, authorize = public)]
    /// async fn balance(session: Context<Session>) -> u64 {
    ///     session.log.lock().unwrap().push("balance".into());
    ///     100
    /// }
    ///
    /// /// Move money.
    /// #[tool(key = "bank.transfer", effect = write, authorize = public, approve = yes)]
    /// async fn transfer(cents: u64, session: Context<Session>) -> bool {
    ///     session.log.lock().unwrap().push(format!("transfer {cents}"));
    ///     true
    /// }
    ///
    /// async fn yes(_: &Session, _: &Invocation<'_, TransferArgs>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder()
    ///     .register::<BalanceArgs>()
    ///     .register::<TransferArgs>()
    ///     .build()
    ///     .unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let session = Session::default();
    /// let calls = vec![
    ///     ToolCall::new("c1", "transfer", json!({"cents": 5})),
    ///     ToolCall::new("c2", "transfer", json!({"cents": 7})),
    ///     ToolCall::new("c3", "balance", json!({})),
    /// ];
    /// let outcomes = executor.run_calls(calls, &session).await;
    /// assert!(outcomes.iter().all(|outcome| !outcome.is_error()));
    /// // The writes in the model's order, each finished before the next call.
    /// assert_eq!(*session.log.lock().unwrap(), ["transfer 5", "transfer 7", "balance"]);
    /// # }
    /// ```
    pub async fn run_calls<C: std::any::Any + Send + Sync>(
        &self,
        calls: Vec<ToolCall>,
        ctx: &C,
    ) -> Vec<CallOutcome> {
        self.run_calls_with_limit(calls, ctx, DEFAULT_CONCURRENCY)
            .await
    }

    /// [`Executor::run_calls`] with another bound on the `read` calls
    /// running at once (at least 1; 1 runs every call alone, in order).
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::providers::ToolCall;
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Look up a city's weather.
    /// #[tool(key = "weather.get", effect = read, authorize = public)]
    /// async fn weather(city: String) -> String { format!("sunny in {city}") }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let catalog = Catalog::builder().register::<WeatherArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, Container::default()).unwrap();
    /// let calls = ["Oslo", "Lima", "Pune"]
    ///     .iter()
    ///     .enumerate()
    ///     .map(|(i, city)| ToolCall::new(format!("c{i}"), "weather", json!({ "city": city })))
    ///     .collect();
    /// let outcomes = executor.run_calls_with_limit(calls, &(), 2).await;
    /// assert_eq!(outcomes[2].model_text(), "sunny in Pune");
    /// # }
    /// ```
    pub async fn run_calls_with_limit<C: std::any::Any + Send + Sync>(
        &self,
        calls: Vec<ToolCall>,
        ctx: &C,
        limit: usize,
    ) -> Vec<CallOutcome> {
        let limit = limit.max(1);
        let total = calls.len();
        let mut planned = calls
            .into_iter()
            .map(|call| {
                let found = self.find_call(&call.name, ctx);
                (call, found)
            })
            .peekable();
        let mut outcomes = Vec::with_capacity(total);
        while let Some((call, found)) = planned.next() {
            if writes(&found) {
                outcomes.push(self.run_call(call, found, ctx).await);
                continue;
            }
            let mut reads = vec![Box::pin(self.run_call(call, found, ctx))];
            while let Some((call, found)) = planned.next_if(|(_, found)| !writes(found)) {
                reads.push(Box::pin(self.run_call(call, found, ctx)));
            }
            outcomes.extend(bounded_join(reads, limit).await);
        }
        outcomes
    }

    async fn run_call<C: std::any::Any + Send + Sync>(
        &self,
        call: ToolCall,
        found: Result<Found, CallError>,
        ctx: &C,
    ) -> CallOutcome {
        let max_result = self.max_result(found.as_ref().ok().map(Found::tool));
        let contents = found
            .as_ref()
            .is_ok_and(|found| content::is_contents(found.tool().output_schema()));
        let result = match (found, call.arguments) {
            (Err(refused), _) => Err(refused),
            (Ok(found), Ok(mut arguments)) => {
                if call.format.is_some_and(Format::is_openai) {
                    strip_absent_nulls(found.tool().input_schema(), &mut arguments);
                }
                self.invoke_found(found, arguments, ctx).await
            }
            (Ok(found), Err(malformed)) => {
                let error = CallError::InvalidArguments {
                    key: found.tool().key(),
                    violations: crate::error::Violations(vec![crate::error::Violation {
                        path: String::new(),
                        message: malformed.to_string(),
                    }]),
                };
                self.refused(Some(&found), &call.name, ctx, &error);
                Err(error)
            }
        };
        let mut outcome = CallOutcome::new(call.id, call.name, result).with_max_result(max_result);
        outcome.contents = contents;
        outcome
    }
}

/// Whether a call found `found` must run alone in its batch: a call of a
/// tool that changes something.
fn writes(found: &Result<Found, CallError>) -> bool {
    found
        .as_ref()
        .is_ok_and(|found| found.tool().effect() != Effect::Read)
}

/// Polls `futures` with at most `limit` in flight; outputs in input order.
async fn bounded_join<F: Future + Unpin>(futures: Vec<F>, limit: usize) -> Vec<F::Output> {
    let mut pending: Vec<Option<F>> = futures.into_iter().map(Some).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    let mut next = 0;
    let mut active: Vec<usize> = Vec::new();
    std::future::poll_fn(|cx| {
        while active.len() < limit && next < pending.len() {
            active.push(next);
            next += 1;
        }
        active.retain(|&i| {
            let future = pending[i].as_mut().expect("active futures are pending");
            match Pin::new(future).poll(cx) {
                Poll::Ready(output) => {
                    outputs[i] = Some(output);
                    pending[i] = None;
                    false
                }
                Poll::Pending => true,
            }
        });
        if active.is_empty() && next == pending.len() {
            Poll::Ready(())
        } else if active.len() < limit && next < pending.len() {
            // A slot freed up: start the next call without waiting for a wake.
            cx.waker().wake_by_ref();
            Poll::Pending
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}

//! Answers to a model's client-side tool search, in each API's shape: the
//! application ranks its deferred tools ([`SearchIndex`](crate::registry::SearchIndex)),
//! then hands the model what it found.
//!
//! Deferred tools ([`ToolEntry::deferred`]) go out with `defer_loading: true`
//! in the [`Format::Anthropic`] and [`Format::OpenAiResponses`] exports:
//! sent with every request, kept out of the prompt until a search names
//! them. Chat Completions and Gemini's `generateContent` have no deferral:
//! [`FoundTools`] keeps a conversation's list, which grows as the model
//! calls `search_tools`.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{ExportError, Format, export};
use crate::catalog::ToolEntry;
use crate::dynamic::DynamicTool;
use crate::effect::Effect;
use crate::registry::Tools;
use crate::registry::search::{Found, SEARCH_DESCRIPTION, SEARCH_TOOL, search_schema};

/// The `tool_result` that answers Anthropic's `tool_use` of a client-side
/// search tool: one `tool_reference` block per tool found, which the model
/// may call from then on. Each must be among the request's `tools`
/// (deferred, normally).
///
/// ```
/// use serde_json::json;
/// use toolwright::providers;
/// use toolwright::{tool, Catalog};
///
/// /// The weather forecast for a city.
/// #[tool(key = "weather.forecast", effect = read, authorize = public, defer)]
/// async fn forecast(city: String) -> String { city }
///
/// let catalog = Catalog::builder().register::<ForecastArgs>().build().unwrap();
/// let answer = providers::tool_reference_result("toolu_01", catalog.iter());
/// assert_eq!(answer, json!({
///     "type": "tool_result",
///     "tool_use_id": "toolu_01",
///     "content": [{"type": "tool_reference", "tool_name": "forecast"}],
/// }));
/// ```
pub fn tool_reference_result<'a>(
    tool_use_id: &str,
    found: impl IntoIterator<Item = &'a ToolEntry>,
) -> Value {
    let references: Vec<Value> = found
        .into_iter()
        .map(|tool| json!({"type": "tool_reference", "tool_name": tool.name()}))
        .collect();
    json!({
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": references,
    })
}

/// The `tool_search_output` item that answers an OpenAI Responses
/// `tool_search_call` of a client-executed search (`execution: "client"`),
/// echoing its `call_id`: the definitions of the tools found, as
/// [`Format::OpenAiResponses`] exports them (`strict` or not, each in its
/// key's namespace), which the model may call from then on.
///
/// ```
/// use toolwright::providers;
/// use toolwright::{tool, Catalog};
///
/// /// The weather forecast for a city.
/// #[tool(key = "weather.forecast", effect = read, authorize = public, defer)]
/// async fn forecast(city: String) -> String { city }
///
/// let catalog = Catalog::builder().register::<ForecastArgs>().build().unwrap();
/// let answer = providers::tool_search_output("call_abc123", catalog.iter(), false).unwrap();
/// assert_eq!(answer["type"], "tool_search_output");
/// assert_eq!(answer["call_id"], "call_abc123");
/// // Loaded into the `weather` namespace, as the first list showed it.
/// let namespace = &answer["tools"][0];
/// assert_eq!((&namespace["type"], &namespace["name"]), (&"namespace".into(), &"weather".into()));
/// assert_eq!(namespace["tools"][0]["name"], "forecast");
/// assert_eq!(namespace["tools"][0]["defer_loading"], true);
/// ```
pub fn tool_search_output<'a>(
    call_id: &str,
    found: impl IntoIterator<Item = &'a ToolEntry>,
    strict: bool,
) -> Result<Value, ExportError> {
    let tools = export(found, Format::OpenAiResponses { strict })?;
    Ok(json!({
        "type": "tool_search_output",
        "execution": "client",
        "call_id": call_id,
        "status": "completed",
        "tools": tools,
    }))
}

/// The deferred tools one conversation found, for the formats without
/// deferral (Chat Completions, Gemini; any format, if the application
/// prefers): its tool list is the tools not deferred, the ones it found
/// and `search_tools`, and grows as the model searches. Keep one per
/// conversation (it serializes, to store beside it).
///
/// ```
/// use serde_json::json;
/// use toolwright::providers::{Format, FoundTools};
/// use toolwright::{tool, Catalog, Container, Executor};
///
/// /// The orders of a customer.
/// #[tool(key = "shop.list_orders", effect = read, authorize = public)]
/// async fn list_orders(customer_id: u64) -> Vec<u64> { vec![] }
///
/// /// The weather forecast for a city.
/// #[tool(key = "weather.forecast", effect = read, authorize = public, defer,
///        search_hint = "rain umbrella")]
/// async fn forecast(city: String) -> String { city }
///
/// let catalog = Catalog::builder()
///     .register::<ListOrdersArgs>()
///     .register::<ForecastArgs>()
///     .build()
///     .unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let tools = executor.tools();
/// let mut found = FoundTools::new();
/// let format = Format::OpenAiChat { strict: false };
/// let names = |list: &serde_json::Value| -> Vec<String> {
///     list.as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
/// };
/// assert_eq!(names(&found.export(&tools, format).unwrap()), ["list_orders", "search_tools"]);
///
/// // The model calls `search_tools`; its answer goes back as the call's result.
/// let answer = found.search(&tools, &json!({"query": "do I need an umbrella"}));
/// assert_eq!(answer["tools"][0]["name"], "forecast");
/// // Nothing is left to find: no search tool.
/// assert_eq!(names(&found.export(&tools, format).unwrap()), ["list_orders", "forecast"]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundTools {
    /// The keys of the tools found, oldest first.
    keys: Found,
}

impl FoundTools {
    /// The most tools a conversation keeps: past it, the tools found first
    /// leave its list again.
    pub const MAX: usize = 32;

    /// A conversation that found nothing yet.
    pub fn new() -> Self {
        FoundTools::default()
    }

    /// Whether the conversation found the tool `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// The name of the search tool, to tell its calls from the others'.
    pub fn search_tool_name() -> &'static str {
        SEARCH_TOOL
    }

    /// The conversation's tool list in `format`: the tools of `tools` not
    /// deferred or found, in catalog order, then `search_tools` when some
    /// deferred tool is left to find. Build `tools` from the caller's view,
    /// so that a search never finds what the caller may not list.
    pub fn export(&self, tools: &Tools, format: Format) -> Result<Value, ExportError> {
        let listed = tools.iter().filter(|tool| self.keys.lists(tool));
        let left = tools.iter().any(|tool| !self.keys.lists(tool));
        let search = left.then(search_entry);
        export(listed.chain(search.iter()), format)
    }

    /// Answers a call of `search_tools` with `arguments`: ranks the
    /// deferred tools of `tools` ([`SearchIndex`](crate::registry::SearchIndex)), keeps the ones found
    /// (they join the list [`export`](Self::export) gives from then on),
    /// and gives the call's result: `{"tools": [{"name", "description",
    /// "parameters"}]}`, or `{"error"}` for arguments without a query.
    pub fn search(&mut self, tools: &Tools, arguments: &Value) -> Value {
        match self.keys.search(tools, arguments, Self::MAX) {
            Ok((found, _)) => {
                let found: Vec<Value> = found
                    .iter()
                    .map(|tool| {
                        json!({
                            "name": tool.name(),
                            "description": tool.description(),
                            "parameters": tool.input_schema(),
                        })
                    })
                    .collect();
                json!({ "tools": found })
            }
            Err(problem) => json!({ "error": problem }),
        }
    }
}

/// `search_tools` as a tool of the catalog, to export beside the others.
fn search_entry() -> ToolEntry {
    let tool = DynamicTool::builder("toolwright.search_tools", SEARCH_TOOL)
        .description(SEARCH_DESCRIPTION)
        .effect(Effect::Read)
        .input_schema(search_schema())
        .handler(|_| {
            Box::pin(async { Err("answered by `FoundTools::search`, not by a call".into()) })
        })
        .build();
    match tool {
        Ok(tool) => tool.into_entry(),
        Err(error) => unreachable!("the search tool is well formed: {error}"),
    }
}

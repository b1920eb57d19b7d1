//! Answers to a model's client-side tool search, in each API's shape: the
//! application ranks its deferred tools ([`SearchIndex`](crate::registry::SearchIndex)),
//! then hands the model what it found.
//!
//! Deferred tools ([`ToolEntry::deferred`]) go out with `defer_loading: true`
//! in the [`Format::Anthropic`] and [`Format::OpenAiResponses`] exports:
//! sent with every request, kept out of the prompt until a search names
//! them. Chat Completions and Gemini's `generateContent` have no deferral:
//! export a deferred tool there only once a search found it.

use serde_json::{Value, json};

use super::{ExportError, Format, export};
use crate::catalog::ToolEntry;

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
/// [`Format::OpenAiResponses`] exports them (`strict` or not), which the
/// model may call from then on.
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
/// assert_eq!(answer["tools"][0]["name"], "forecast");
/// assert_eq!(answer["tools"][0]["defer_loading"], true);
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

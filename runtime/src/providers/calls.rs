//! The tool calls in a model's response, read from the provider's shape.

use serde_json::{Value, json};

use super::Format;

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
    pub(super) format: Option<Format>,
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

//! How calls ended, and the messages that return them to the model.

use serde_json::{Map, Value, json};

use crate::content;
use crate::error::CallError;
#[cfg(doc)]
use crate::executor::Executor;
use crate::util::excerpt::{Excerpt, QUOTED_CHARS, result_text};

use super::Format;

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
/// let denied = CallOutcome::new("c2", "ping", Err(CallError::Denied { key: "net.ping".into() }));
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
    pub(super) contents: bool,
}

impl CallOutcome {
    /// The outcome of call `id` of tool `name`, its result shown to a model
    /// up to [`DEFAULT_MAX_RESULT`](crate::executor::DEFAULT_MAX_RESULT) characters.
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
            max_result: crate::executor::DEFAULT_MAX_RESULT,
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
    /// assert_eq!(outcome.max_result(), toolwright::executor::DEFAULT_MAX_RESULT);
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
/// let panicked = CallError::Panicked { key: "orders.place".into(), message: "index out of bounds".into() };
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

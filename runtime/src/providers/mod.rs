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

mod calls;
mod export;
mod format;
mod node;
mod results;
mod run_calls;
mod schema;
mod search;

pub use calls::{MalformedArguments, ParseError, ToolCall, parse_calls};
pub use export::{
    ExportError, UnknownTool, export, export_json, schema_for, select, tool_definition,
};
pub use format::{Format, UnknownFormat};
pub use results::{CallOutcome, model_message, result_message, result_messages};
pub use run_calls::DEFAULT_CONCURRENCY;
pub use search::{FoundTools, tool_reference_result, tool_search_output};

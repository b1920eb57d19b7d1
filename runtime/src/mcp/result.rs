//! A `tools/call` result as MCP carries it: the call's value as text and
//! structured content (or its content blocks), or the refusal the model
//! reads, with the approval request of a call that waits for one.

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::catalog::OutputShape;
use crate::error::CallError;
use crate::request::ApprovalRequest;
use crate::util::excerpt::result_text;

/// The `_meta` key under which a `tools/call` result that waits for
/// approval carries its [`ApprovalRequest`].
///
/// Such a result is an `isError` result whose text tells the model to wait;
/// the request itself (tool key, name, validated arguments, digest) is for
/// the client application, which can show it to a person. It is not in
/// `structuredContent`: MCP clients check that against the tool's output
/// schema, and the official TypeScript SDK does so for error results too.
/// [`approval_request`] reads it back.
///
/// ```
/// assert_eq!(toolwright::mcp::APPROVAL_REQUIRED, "toolwright/approvalRequired");
/// ```
pub const APPROVAL_REQUIRED: &str = "toolwright/approvalRequired";

/// The [`ApprovalRequest`] a `tools/call` result carries when the call waits
/// for approval (under [`APPROVAL_REQUIRED`] in its `_meta`), or `None` for
/// any other result. A value under that key that is not an approval request
/// (from a server of another version, say) is the error that says why.
///
/// For an application that drives a toolwright server with rmcp's client:
/// show the request to a person, record their approval of its digest, then
/// send the same call again.
///
/// ```
/// use serde_json::json;
/// use toolwright::approval::Digest;
/// use toolwright::mcp::approval_request;
/// use toolwright::mcp::rmcp::model::CallToolResult;
///
/// let arguments = json!({"id": 7});
/// let digest = Digest::of("tasks.delete", &arguments);
/// // A result as a client receives it from the server.
/// let result: CallToolResult = serde_json::from_value(json!({
///     "content": [{"type": "text", "text": "This call needs a person's approval."}],
///     "isError": true,
///     "_meta": {"toolwright/approvalRequired": {
///         "key": "tasks.delete",
///         "name": "delete_task",
///         "arguments": arguments,
///         "digest": digest,
///     }},
/// }))
/// .unwrap();
///
/// let request = approval_request(&result).unwrap().expect("the call waits for approval");
/// assert_eq!(request.name, "delete_task");
/// assert_eq!(request.digest, digest);
///
/// let done = CallToolResult::success(Vec::new());
/// assert!(approval_request(&done).unwrap().is_none());
///
/// let mut garbled = result.clone();
/// garbled.meta.as_mut().unwrap().insert("toolwright/approvalRequired".into(), json!({"key": 1}));
/// assert!(approval_request(&garbled).is_err());
/// ```
pub fn approval_request(
    result: &CallToolResult,
) -> Result<Option<ApprovalRequest>, serde_json::Error> {
    let Some(request) = result
        .meta
        .as_ref()
        .and_then(|meta| meta.get(APPROVAL_REQUIRED))
    else {
        return Ok(None);
    };
    ApprovalRequest::deserialize(request).map(Some)
}

/// The answer to a `tools/call`: the result's text, cut past `max_result`
/// characters (see [`ExecutorBuilder::max_result`](crate::executor::ExecutorBuilder::max_result)),
/// and for a tool with an output schema the value as `structuredContent`
/// (an object as it is, any other value as `{"result": value}`), which MCP
/// requires to match that schema. So it is cut only where a cut value still
/// matches: a string its schema puts no rule on is cut as the text is; any
/// other value over the bound makes the result an error that names the
/// bound. A [`Contents`](crate::Contents) result's blocks are its content,
/// as they are.
pub(super) fn tool_result(
    shape: OutputShape,
    max_result: usize,
    result: Result<Value, CallError>,
) -> CallToolResult {
    match result {
        // Blocks: a `Contents` value, or the content an imported tool's
        // upstream sent when it sent more than text. (Such a tool's text
        // is its other value: shown as text, below.)
        Ok(value @ Value::Array(_)) if shape == OutputShape::Contents => {
            match serde_json::from_value::<Vec<ContentBlock>>(value) {
                Ok(blocks) => CallToolResult::success(blocks),
                Err(error) => {
                    tracing::error!(%error, "a tool's content blocks are not MCP's");
                    CallToolResult::error(vec![ContentBlock::text("The tool failed.")])
                }
            }
        }
        Ok(value) => {
            let (text, cut) = result_text(&value, max_result);
            let structured = match shape {
                OutputShape::Unknown | OutputShape::Contents => None,
                OutputShape::Object | OutputShape::Other if cut => {
                    return CallToolResult::error(vec![ContentBlock::text(format!(
                        "The tool's result is longer than this tool's limit of {max_result} \
                         characters (max_result), and it cannot be cut and still match the \
                         tool's output schema."
                    ))]);
                }
                // An object, unless a tool built at run time (an imported
                // one) broke its schema: then text alone, never a value
                // that contradicts the schema.
                OutputShape::Object => value.is_object().then_some(value),
                OutputShape::Text if cut => Some(wrapped(Value::from(text.clone()))),
                OutputShape::Text | OutputShape::Other => Some(wrapped(value)),
            };
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = structured;
            result
        }
        Err(CallError::ApprovalRequired(request)) => {
            let message = CallError::ApprovalRequired(request.clone()).model_message();
            let mut result = CallToolResult::error(vec![ContentBlock::text(message)]);
            // Not in `structuredContent`: clients check that against the
            // tool's output schema, error results included.
            let mut meta = JsonObject::new();
            meta.insert(APPROVAL_REQUIRED.into(), json!(*request));
            result.meta = Some(MetaObject(meta));
            result
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error.model_message())]),
    }
}

/// `{"result": value}`, `value` moved in (`json!` would serialize it again).
fn wrapped(value: Value) -> Value {
    let mut wrapped = JsonObject::new();
    wrapped.insert("result".into(), value);
    Value::Object(wrapped)
}

//! A remote tool as a local one: its description and its results.

use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use crate::error::BoxError;

/// The description a model reads: the remote one, or the title, or a
/// line naming the remote tool when it has neither.
pub(super) fn description(tool: &Tool, namespace: &str) -> String {
    match (&tool.description, &tool.title) {
        (Some(description), _) if !description.trim().is_empty() => description.to_string(),
        (_, Some(title)) if !title.trim().is_empty() => title.clone(),
        _ => format!("The `{}` tool of `{namespace}`.", tool.name),
    }
}

/// The output schema of a remote tool that declares none: its text, or its
/// content blocks (as [`Contents`](crate::Contents) holds them) when it sent
/// more than text: an image, audio, a resource. Marked as content, so that
/// MCP serves the blocks as the upstream sent them, and model providers
/// read their text.
pub(super) fn result_schema() -> Value {
    let blocks = <crate::Contents as schemars::JsonSchema>::json_schema(
        &mut schemars::SchemaGenerator::default(),
    );
    let mut schema = serde_json::json!({
        "description": "The remote tool's text, or its content blocks when it sent more than text.",
        "anyOf": [{"type": "string"}, blocks],
    });
    schema[crate::content::CONTENTS_MARK] = Value::Bool(true);
    schema
}

/// A remote result as the call's: its structured content if it has some;
/// else its text, when every block is text; else the blocks as JSON. An
/// error result is the call's tool error, with the text the server gave.
pub(super) fn result(result: CallToolResult) -> Result<Value, BoxError> {
    let texts: Option<Vec<&str>> = result
        .content
        .iter()
        .map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    if result.is_error == Some(true) {
        let message = match texts {
            Some(texts) if !texts.is_empty() => texts.join("\n"),
            _ => "the remote tool failed and said nothing".to_owned(),
        };
        return Err(message.into());
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    match texts {
        Some(texts) => Ok(Value::String(texts.join("\n"))),
        None => Ok(serde_json::to_value(&result.content)?),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};
    use serde_json::json;

    use super::result;

    #[test]
    fn remote_results_become_values_and_remote_errors_tool_errors() {
        let text = |t: &str| ContentBlock::text(t);
        let ok = CallToolResult::success(vec![text("a"), text("b")]);
        assert_eq!(result(ok).unwrap(), json!("a\nb"));
        let structured = CallToolResult::structured(json!({"sum": 5}));
        assert_eq!(result(structured).unwrap(), json!({"sum": 5}));
        let failed = CallToolResult::error(vec![text("no such file")]);
        assert_eq!(result(failed).unwrap_err().to_string(), "no such file");
    }
}

//! A remote tool as a local one: its qualified key and name, its
//! definition, and its results.

use rmcp::model::{CallToolResult, Tool};
use serde_json::Value;

use crate::error::BoxError;
use crate::util::names::{MAX_NAME_LEN, is_valid_key, is_valid_name};

/// The key and name of remote tool `remote` in `namespace`: key
/// `namespace.remote` with the remote name lowercased and every character
/// a key may not hold made `_`; name `namespace_remote` (dots of the
/// namespace made `_`) with the remote name as it is, where the name rule
/// allows it. `Err` says why the tool cannot be served under a name every
/// provider accepts.
pub(super) fn qualified(namespace: &str, remote: &str) -> Result<(String, String), String> {
    let mut segment: String = remote
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_') => c,
            _ => '_',
        })
        .collect();
    if !segment.starts_with(|c: char| c.is_ascii_lowercase()) {
        segment.insert(0, 't');
    }
    let key = format!("{namespace}.{segment}");
    let prefix = namespace.replace('.', "_");
    let name: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = format!("{prefix}_{name}");
    if !is_valid_key(&key) {
        return Err(format!("its key `{key}` is not a valid key"));
    }
    if name.len() > MAX_NAME_LEN || !is_valid_name(&name) {
        return Err(format!(
            "its name `{name}` is longer than {MAX_NAME_LEN} characters or not a valid name"
        ));
    }
    Ok((key, name))
}

/// The description a model reads: the remote one, or the title, or a
/// line naming the remote tool when it has neither.
pub(super) fn description(tool: &Tool, namespace: &str) -> String {
    match (&tool.description, &tool.title) {
        (Some(description), _) if !description.trim().is_empty() => description.to_string(),
        (_, Some(title)) if !title.trim().is_empty() => title.clone(),
        _ => format!("The `{}` tool of `{namespace}`.", tool.name),
    }
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

    use super::{qualified, result};

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

    #[test]
    fn remote_names_are_qualified_within_the_rules() {
        let pair = |k: &str, n: &str| Ok((k.to_owned(), n.to_owned()));
        assert_eq!(
            qualified("everything", "get-sum"),
            pair("everything.get_sum", "everything_get-sum")
        );
        assert_eq!(
            qualified("gh.work", "Create Issue"),
            pair("gh.work.create_issue", "gh_work_Create_Issue")
        );
        assert_eq!(qualified("x", "9lives"), pair("x.t9lives", "x_9lives"));
        assert!(qualified("x", &"a".repeat(70)).is_err());
    }
}

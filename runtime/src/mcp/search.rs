//! Deferred tools over MCP, which has no standard for them yet: `tools/list`
//! shows the tools that are not deferred and one more, `search_tools`,
//! while the caller's view holds a deferred tool. A search ranks the
//! view's deferred tools ([`SearchIndex`](crate::registry::SearchIndex)) and answers with the tools it
//! found, their input schemas included; in a session, it also adds them to
//! that session's list (at most [`DEFAULT_MAX_FOUND`] unless the server
//! says, the oldest going first) and tells that session, and no other,
//! that its list changed. What a session found ends with it.
//!
//! Deferral is no permission: a deferred tool inside the caller's view is
//! called like any other, found or not; one outside it is refused.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Value, json};

use crate::catalog::ToolEntry;
use crate::executor::Executor;
use crate::registry::Tools;
use crate::registry::search;

pub(super) use crate::registry::search::SEARCH_TOOL;

/// How many tools a session keeps from its searches unless
/// [`McpServerBuilder::max_found`](super::McpServerBuilder::max_found)
/// says otherwise: 32.
///
/// ```
/// assert_eq!(toolwright::mcp::DEFAULT_MAX_FOUND, 32);
/// ```
pub const DEFAULT_MAX_FOUND: usize = 32;

/// The deferred tools one session found, which its list shows too.
#[derive(Debug, Default)]
pub(super) struct Found(Mutex<search::Found>);

impl Found {
    fn found(&self) -> std::sync::MutexGuard<'_, search::Found> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the session found the tool `key`.
    pub(super) fn contains(&self, key: &str) -> bool {
        self.found().contains(key)
    }

    /// Whether `tool` is in the session's list: not deferred, or found.
    pub(super) fn lists(&self, tool: &ToolEntry) -> bool {
        self.found().lists(tool)
    }
}

/// Whether `tools` would list the search tool: one of them is deferred,
/// and none is called `search_tools` itself (that one stays the
/// application's).
pub(super) fn offered(tools: &Tools) -> bool {
    tools.get(SEARCH_TOOL).is_none() && tools.iter().any(ToolEntry::deferred)
}

/// The search tool as `tools/list` shows it.
pub(super) fn tool() -> Tool {
    let Value::Object(schema) = search::search_schema() else {
        unreachable!("an object literal")
    };
    Tool::new(SEARCH_TOOL, search::SEARCH_DESCRIPTION, Arc::new(schema)).with_title("Search tools")
}

/// Runs a search of `executor`'s deferred tools for `arguments`; the
/// tools found go into `found` (when the session keeps them, at most
/// `cap`). The answer, and whether the session's list changed.
pub(super) fn run(
    executor: &Executor,
    arguments: &serde_json::Map<String, Value>,
    found: Option<&Found>,
    cap: usize,
) -> (CallToolResult, bool) {
    let arguments = Value::Object(arguments.clone());
    let tools = executor.tools();
    // Without a session, a search only answers.
    let mut alone = search::Found::default();
    let searched = match found {
        Some(found) => found.found().search(&tools, &arguments, cap),
        None => alone.search(&tools, &arguments, cap),
    };
    let (entries, changed) = match searched {
        Ok(searched) => searched,
        Err(refused) => {
            return (
                CallToolResult::error(vec![ContentBlock::text(refused)]),
                false,
            );
        }
    };
    let described: Vec<Value> = entries
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name(),
                "description": tool.description(),
                "inputSchema": tool.input_schema(),
            })
        })
        .collect();
    let mut text = match entries.len() {
        0 => "No tool fits; try other words.".to_owned(),
        n => format!("{n} tools fit; call them by name:"),
    };
    for tool in &entries {
        text.push_str(&format!("\n- {}: {}", tool.name(), tool.description()));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({ "tools": described }));
    (result, changed)
}

//! An in-process MCP client (rmcp's) for a server's handler, shared by the
//! test binaries that talk MCP; each uses a part of it.
#![allow(dead_code)]

use std::any::Any;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use toolwright::mcp::McpServer;

/// A client connected to `server`, serving every request with `ctx`.
pub(crate) async fn connect<C: Any + Send + Sync>(
    server: &McpServer<C>,
    ctx: C,
) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(ctx);
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_io).await.unwrap()
}

/// `tools/call` of `name` with `args` (an object).
pub(crate) async fn call(
    client: &RunningService<RoleClient, ()>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args))
        .await
        .unwrap()
}

/// The names `tools/list` gives.
pub(crate) async fn tool_names(client: &RunningService<RoleClient, ()>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The text of a result's first content block.
pub(crate) fn text(result: &CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

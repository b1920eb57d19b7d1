//! The gateway as an MCP client application starts it: the binary over
//! stdio, its upstreams started with `npx` (from npm, at their pinned
//! versions), driven by rmcp's client.

use std::path::PathBuf;
use std::process::Stdio;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

/// Whether `npx` runs here; with `CI=true` it must.
fn npx_or_skip(test: &str) -> bool {
    let runs = std::process::Command::new("npx")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !runs && std::env::var("CI").as_deref() == Ok("true") {
        panic!("{test}: npx is not installed (install Node.js and npm)");
    }
    if !runs {
        eprintln!("skipped {test}: npx is not installed");
    }
    runs
}

#[tokio::test]
async fn an_mcp_client_starts_the_gateway_over_stdio_and_calls_an_imported_tool() {
    let test = "an_mcp_client_starts_the_gateway_over_stdio_and_calls_an_imported_tool";
    if !npx_or_skip(test) {
        return;
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("gateway-stdio-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_gateway"));
    command.current_dir(&dir);
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let client = ().serve(transport).await.unwrap();
    let call = |name: &'static str, arguments: Value| {
        let params =
            CallToolRequestParams::new(name).with_arguments(arguments.as_object().unwrap().clone());
        client.call_tool(params)
    };
    let text = |result: &rmcp::model::CallToolResult| {
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
            .collect();
        texts.join("\n")
    };

    // Its own tools up front; the imported ones deferred behind a search.
    let names = |tools: Vec<rmcp::model::Tool>| -> Vec<String> {
        tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect()
    };
    let listed = names(client.list_all_tools().await.unwrap());
    assert_eq!(listed, ["add_note", "list_notes", "search_tools"]);
    let found = call(
        "search_tools",
        json!({"query": "echo a message", "limit": 1}),
    );
    let found = found.await.unwrap();
    assert!(text(&found).contains("everything_echo"), "{}", text(&found));
    let echoed = call("everything_echo", json!({"message": "over stdio"}));
    assert_eq!(text(&echoed.await.unwrap()), "Echo: over stdio");
    client.cancel().await.unwrap();

    // Both upstreams' definitions pinned where the next start checks them.
    let pins: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("gateway-pins.json")).unwrap())
            .unwrap();
    assert!(
        pins["everything"].is_object() && pins["files"].is_object(),
        "{pins}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

//! Deferred tools over MCP: the first list holds the tools not deferred and
//! `search_tools`; a search answers with what it found and adds it to that
//! session's list alone, up to a cap; deferral is no permission. Checked
//! with rmcp's client in process, and with the official Python SDK over
//! Streamable HTTP.

use std::path::PathBuf;
use std::process::Command;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::registry::{Selector, View};
use toolwright::{Catalog, Container, Executor, tool};

mod installs;
mod mcp_client;

/// The orders of a customer, newest first.
#[tool(key = "shop.list_orders", effect = read, authorize = public)]
async fn list_orders(customer_id: u64) -> Vec<u64> {
    vec![customer_id]
}

/// The weather forecast for a city.
#[tool(key = "weather.forecast", effect = read, authorize = public, defer,
       search_hint = "rain umbrella sunny temperature")]
async fn forecast(city: String) -> String {
    format!("sunny in {city}")
}

/// Convert an amount between two currencies.
#[tool(key = "money.convert", effect = read, authorize = public, defer)]
async fn convert(amount: f64, from: String, to: String) -> String {
    format!("{amount} {from} in {to}")
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<ListOrdersArgs>()
        .register::<ForecastArgs>()
        .register::<ConvertArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

async fn names(client: &rmcp::service::RunningService<rmcp::RoleClient, ()>) -> Vec<String> {
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    names.sort();
    names
}

async fn search(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    query: &str,
) -> Vec<String> {
    let arguments = json!({"query": query});
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let result = client
        .call_tool(CallToolRequestParams::new("search_tools").with_arguments(arguments))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    let found = result.structured_content.unwrap();
    found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_search_adds_what_it_found_to_its_session_up_to_the_cap() {
    let executor = executor();
    let server = McpServer::builder(executor.clone(), "deferred", "0.1.0")
        .max_found(1)
        .build();
    let client = mcp_client::connect(&server, ()).await;
    assert_eq!(names(&client).await, ["list_orders", "search_tools"]);

    assert_eq!(search(&client, "umbrella for Oslo").await, ["forecast"]);
    assert_eq!(
        names(&client).await,
        ["forecast", "list_orders", "search_tools"]
    );
    // One tool kept at most: the next find takes the first one's place.
    assert_eq!(
        search(&client, "convert euros to dollars").await[0],
        "convert"
    );
    assert_eq!(
        names(&client).await,
        ["convert", "list_orders", "search_tools"]
    );
    // No word in common: nothing found, nothing changed.
    assert!(search(&client, "xylophone").await.is_empty());

    // Another session starts with the first list again.
    let other = mcp_client::connect(&server, ()).await;
    assert_eq!(names(&other).await, ["list_orders", "search_tools"]);

    // Deferred at run time: out of the list, and found by the next search
    // (the index is the registry's generation's).
    let shop = toolwright::registry::Selector::namespace("shop");
    executor.registry().defer(&shop, true).unwrap();
    assert_eq!(names(&other).await, ["search_tools"]);
    assert_eq!(
        search(&other, "orders of a customer").await,
        ["list_orders"]
    );
}

#[tokio::test]
async fn a_view_without_deferred_tools_lists_no_search_and_a_search_never_leaves_the_view() {
    let executor = executor();
    let server = McpServer::builder(executor, "deferred", "0.1.0")
        .views(|caller: &&'static str| match *caller {
            "shop" => View::new(Selector::namespace("shop")),
            _ => View::new(Selector::namespace("shop").or(Selector::namespace("money"))),
        })
        .build();
    let shop = mcp_client::connect(&server, "shop").await;
    assert_eq!(names(&shop).await, ["list_orders"]);
    let refused = shop
        .call_tool(CallToolRequestParams::new("search_tools"))
        .await;
    assert!(refused.is_err(), "no search tool to call: {refused:?}");

    let banker = mcp_client::connect(&server, "banker").await;
    assert_eq!(names(&banker).await, ["list_orders", "search_tools"]);
    // The forecast is outside the view: never found, and refused.
    assert!(
        search(&banker, "umbrella rain weather forecast")
            .await
            .is_empty()
    );
    let arguments = json!({"city": "Oslo"});
    let Value::Object(arguments) = arguments else {
        unreachable!()
    };
    let called = banker
        .call_tool(CallToolRequestParams::new("forecast").with_arguments(arguments))
        .await;
    assert!(called.is_err(), "called outside its view: {called:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_finds_a_deferred_tool_and_only_its_session_lists_it() {
    let test = "the_python_sdk_finds_a_deferred_tool_and_only_its_session_lists_it";
    let Some(python) = installs::python_or_skip(test) else {
        return;
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::builder(executor(), "deferred", "0.1.0").build();
    tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), HttpOptions::default()));

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/search_client.py");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python).arg(script).arg(&url).output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        stderr.lines().rev().take(20).collect::<Vec<_>>().join("\n")
    );
    assert!(stdout.contains("9 passed, 0 failed"), "{stdout}");
}

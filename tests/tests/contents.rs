//! A tool whose result is content blocks (`Contents`): an MCP client gets
//! the blocks as its content, with no output schema or structured content;
//! a model provider's message gets their text and a name for each other
//! block; the application gets the blocks whole.

mod mcp_client;

use serde_json::json;
use toolwright::mcp::McpServer;
use toolwright::providers::{self, Format, ToolCall};
use toolwright::{Catalog, Container, Content, Contents, Executor, tool};

/// Draw this month's sales chart.
#[tool(key = "sales.chart", effect = read, authorize = public)]
async fn sales_chart() -> Contents {
    Contents::from(vec![
        Content::text("Sales rose 4%."),
        Content::image(&[0x89, b'P', b'N', b'G', 0, 0], "image/png"),
        Content::resource_text("sales://2026-12", "text/csv", "month,sales\n12,104"),
    ])
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<SalesChartArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

#[tokio::test]
async fn an_mcp_client_gets_the_blocks_as_content() {
    let server = McpServer::new(executor(), "contents-test", "0.1.0");
    let client = mcp_client::connect(&server, ()).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(
        tools[0].output_schema.is_none(),
        "blocks are not structured content"
    );

    let result = mcp_client::call(&client, "sales_chart", json!({})).await;
    assert_eq!(result.is_error, Some(false));
    assert!(result.structured_content.is_none());
    let content = serde_json::to_value(&result.content).unwrap();
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "Sales rose 4%."})
    );
    assert_eq!(
        content[1],
        json!({"type": "image", "data": "iVBORwAA", "mimeType": "image/png"})
    );
    assert_eq!(content[2]["type"], "resource");
    assert_eq!(content[2]["resource"]["uri"], "sales://2026-12");
    assert_eq!(content[2]["resource"]["text"], "month,sales\n12,104");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_model_is_shown_the_text_and_the_application_gets_the_blocks() {
    let executor = executor();
    let outcomes = executor
        .run_calls(vec![ToolCall::new("c1", "sales_chart", json!({}))], &())
        .await;
    assert_eq!(
        outcomes[0].model_text(),
        "Sales rose 4%.\n[image/png, 6 bytes]\n[sales://2026-12]\nmonth,sales\n12,104"
    );
    let message = providers::result_message(&outcomes[0], Format::Anthropic);
    assert_eq!(message["content"], outcomes[0].model_text());

    let blocks = executor
        .invoke("sales_chart", json!({}), &())
        .await
        .unwrap();
    assert_eq!(blocks.as_array().unwrap().len(), 3);
    let typed = executor.call(SalesChartArgs {}, &()).await.unwrap();
    assert_eq!(typed.0.len(), 3);
}

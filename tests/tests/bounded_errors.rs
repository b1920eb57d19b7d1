//! Errors never flood a model: whatever a caller sends (a 900 KB value,
//! 60,000 unknown keys, a 900 KB tool name), the text a model reads back
//! through a direct call, a provider's result message or MCP is short, and
//! the application's error still holds every violation.

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use serde_json::{Map, Value, json};
use toolwright::mcp::McpServer;
use toolwright::providers::{self, Format, ToolCall};
use toolwright::{CallError, Catalog, Container, Executor, tool};

/// The most a model may read about one failed call.
const SHORT: usize = 2 * 1024;

/// A SKU: upper-case letters and digits.
#[derive(Debug, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(try_from = "String")]
struct Sku(String);

impl TryFrom<String> for Sku {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        if text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        {
            Ok(Sku(text))
        } else {
            // Echoes the input, as many a type's own check does.
            Err(format!(
                "`{text}` is not a SKU: use upper-case letters and digits"
            ))
        }
    }
}

/// Reserve some quantity of a product.
#[tool(key = "stock.reserve", effect = read, authorize = public)]
async fn reserve(
    /// A short note for the warehouse.
    #[schemars(length(max = 16))]
    note: Option<String>,
    /// How many.
    quantity: Option<u32>,
    /// The product.
    sku: Option<Sku>,
    /// Bins to take from.
    bins: Option<Vec<u32>>,
) -> String {
    format!("{note:?} {quantity:?} {sku:?} {bins:?}")
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<ReserveArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

fn huge() -> String {
    "a".repeat(900 * 1024)
}

/// Every text a model reads about `name` called with `arguments`: the
/// direct call's model message, each provider's result message, and MCP's
/// answer (a tool result's text, or a JSON-RPC error's message and data).
/// Also returns the direct call's error, for the application's view.
async fn model_texts(name: &str, arguments: Value) -> (CallError, Vec<String>) {
    let executor = executor();
    let error = executor
        .invoke(name, arguments.clone(), &())
        .await
        .unwrap_err();
    let mut texts = vec![error.model_message()];

    let outcomes = executor
        .run_calls(vec![ToolCall::new("call_1", name, arguments.clone())], &())
        .await;
    for format in Format::ALL {
        for message in providers::result_messages(&outcomes, format) {
            texts.push(message.to_string());
        }
    }

    let client = connect(&executor).await;
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let answer = client
        .call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(arguments))
        .await;
    texts.push(match answer {
        Ok(result) => text(&result),
        Err(ServiceError::McpError(error)) => serde_json::to_string(&error).unwrap(),
        Err(other) => panic!("expected an answer, got {other:?}"),
    });
    client.cancel().await.unwrap();
    (error, texts)
}

async fn connect(executor: &Executor) -> RunningService<RoleClient, ()> {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = McpServer::<()>::new(executor.clone(), "bounded", "0.1.0").handler(());
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_io).await.unwrap()
}

fn text(result: &CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "the call fails");
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn assert_short(texts: &[String], says: &str) {
    for text in texts {
        assert!(
            text.len() < SHORT,
            "{} bytes: {}",
            text.len(),
            text.chars().take(200).collect::<String>()
        );
        assert!(text.contains(says), "{text}");
    }
}

#[tokio::test]
async fn a_900_kb_value_gets_a_short_error_on_every_front_end() {
    let cases = [
        // Longer than the schema allows.
        (json!({"note": huge()}), "/note"),
        // Of the wrong type.
        (json!({"quantity": huge()}), "/quantity"),
        // Refused by the type's own check, whose message quotes it.
        (json!({"sku": huge()}), "/sku"),
    ];
    for (arguments, path) in cases {
        let (error, texts) = model_texts("reserve", arguments).await;
        assert_short(&texts, path);
        assert_short(&texts, "more characters]");
        // The application's log line is short too, and names the path.
        assert_short(&[error.to_string()], path);
        let CallError::InvalidArguments { violations, .. } = error else {
            panic!("{error}")
        };
        assert_eq!(violations.0.len(), 1);
        assert_eq!(violations.0[0].path, path);
    }
}

#[tokio::test]
async fn the_end_of_a_cut_message_still_says_what_was_expected() {
    let (_, texts) = model_texts("reserve", json!({"sku": huge()})).await;
    assert_short(&texts, "use upper-case letters and digits");
    let (_, texts) = model_texts("reserve", json!({"note": huge()})).await;
    assert_short(&texts, "is longer than 16 characters");
}

#[tokio::test]
async fn sixty_thousand_unknown_keys_are_counted_not_listed() {
    let unknown: Map<String, Value> = (0..60_000)
        .map(|i| (format!("key{i:05}"), json!(i)))
        .collect();
    let (error, texts) = model_texts("reserve", Value::Object(unknown)).await;
    assert_short(&texts, "'key00009', and 59990 more were unexpected");
    for text in &texts {
        assert!(!text.contains("key00010"), "{text}");
    }
    assert_short(&[error.to_string()], "and 59990 more");
}

#[tokio::test]
async fn sixty_thousand_violations_list_ten_and_the_application_keeps_them_all() {
    let bins: Vec<Value> = (0..60_000).map(|i| json!(format!("bin {i}"))).collect();
    let (error, texts) = model_texts("reserve", json!({ "bins": bins })).await;
    assert_short(&texts, "/bins/9: ");
    assert_short(&texts, "; and 59990 more");
    for text in &texts {
        assert!(!text.contains("/bins/10:"), "{text}");
    }
    assert_short(&[error.to_string()], "; and 59990 more");
    let CallError::InvalidArguments { violations, .. } = error else {
        panic!("{error}")
    };
    assert_eq!(violations.0.len(), 60_000);
    assert_eq!(violations.0[59_999].path, "/bins/59999");
}

#[tokio::test]
async fn a_900_kb_tool_name_gets_a_short_error_on_every_front_end() {
    let name = huge();
    let (error, texts) = model_texts(&name, json!({})).await;
    assert_short(&texts, "more characters]");
    assert_short(&[error.to_string()], "unknown tool `aaaa");
    // The application keeps the name it was asked for.
    let CallError::UnknownTool { name: asked } = error else {
        panic!("{error}")
    };
    assert_eq!(asked, name);
}

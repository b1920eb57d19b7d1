//! The example end to end against a scripted OpenAI-compatible server on
//! 127.0.0.1: the agent reads a product, its order waits for bob's
//! approval, and the resumed run places it once and answers.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

type Replies = Arc<Mutex<VecDeque<Value>>>;

async fn complete(State(replies): State<Replies>, Json(_): Json<Value>) -> Json<Value> {
    let reply = replies.lock().unwrap().pop_front();
    Json(reply.unwrap_or_else(|| says("(the script has no reply left)")))
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    let message = json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [{
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": arguments.to_string()},
        }],
    });
    completion(message, "tool_calls")
}

fn says(text: &str) -> Value {
    completion(json!({"role": "assistant", "content": text}), "stop")
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-agent",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    })
}

#[tokio::test]
async fn the_agent_reads_waits_for_approval_and_orders_once() {
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 2});
    let replies: Replies = Arc::new(Mutex::new(VecDeque::from([
        call(
            "call_1",
            "get_product",
            json!({"tenant_id": 1, "product_id": 1}),
        ),
        call("call_2", "place_order", order.clone()),
        says("Two anvils are ordered."),
    ])));
    let app = Router::new()
        .route("/v1/chat/completions", post(complete))
        .with_state(replies.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });

    let config = agent::Config {
        base_url: format!("http://{address}/v1"),
        model: "scripted".to_owned(),
        api_key: "none".to_owned(),
    };
    let said = agent::run(&config, "Order two anvils.").await.unwrap();
    let canonical = order.to_string();
    assert_eq!(
        said,
        [
            format!("waits: place_order {canonical} (request 1)"),
            "bob approves request 1".to_owned(),
            "agent: Two anvils are ordered.".to_owned(),
            "request 1: settled (succeeded)".to_owned(),
        ]
    );
    assert!(
        replies.lock().unwrap().is_empty(),
        "the script was not played out"
    );
}

//! Searching tools: ranked by what a caller asks, within what the caller
//! may list; a tool the caller's view hides is never found.

use serde_json::json;
use toolwright::registry::{DynamicTool, Registry, SearchIndex, Selector, View};
use toolwright::{Catalog, Container, Effect, Executor, Invocation, tool};

async fn anyone<A>(_: &(), _: &Invocation<'_, A>) -> bool {
    true
}

/// Cancel an order that has not shipped yet.
#[tool(key = "shop.cancel_order", effect = destructive, authorize = public, approve = anyone)]
async fn cancel_order(order_id: u64) -> bool {
    order_id > 0
}

/// The orders of a customer, newest first.
#[tool(key = "shop.list_orders", effect = read, authorize = public)]
async fn list_orders(
    /// The customer whose orders to list.
    customer_id: u64,
) -> Vec<u64> {
    vec![customer_id]
}

/// The weather forecast for a city.
#[tool(key = "weather.forecast", effect = read, authorize = public, tags = ["outdoors"],
       defer, search_hint = "rain umbrella sunny temperature")]
async fn forecast(city: String) -> String {
    city
}

fn catalog() -> Catalog {
    Catalog::builder()
        .register::<CancelOrderArgs>()
        .register::<ListOrdersArgs>()
        .register::<ForecastArgs>()
        .build()
        .unwrap()
}

fn executor() -> Executor {
    Executor::new(catalog(), Container::default()).unwrap()
}

fn found(index: &SearchIndex, query: &str) -> Vec<String> {
    index
        .search(query, 5)
        .into_iter()
        .map(|hit| hit.name)
        .collect()
}

#[test]
fn tools_are_ranked_by_their_words_and_parameters() {
    let executor = executor();
    let tools = executor.tools();
    let index = SearchIndex::new(&tools);
    assert_eq!(index.len(), 3);
    assert_eq!(found(&index, "cancel my order")[0], "cancel_order");
    // A parameter's description counts: "customer" is in no name.
    assert_eq!(found(&index, "what did this customer buy"), ["list_orders"]);
    // Tags count too; a query in no tool's words finds nothing.
    assert_eq!(found(&index, "outdoors"), ["forecast"]);
    assert!(found(&index, "send an email").is_empty());
    // The same query, the same answer, scores included.
    assert_eq!(index.search("orders", 5), index.search("orders", 5));
    assert_eq!(index.search("orders", 1).len(), 1);
}

#[test]
fn a_search_within_a_view_never_finds_a_tool_the_view_hides() {
    let executor = executor();
    let reader = executor.view(View::new(Selector::effect(Effect::Read)));
    let tools = reader.tools();
    let index = SearchIndex::new(&tools);
    assert_eq!(index.len(), 2);
    let hits = found(&index, "cancel my order");
    assert!(!hits.contains(&"cancel_order".to_owned()), "{hits:?}");
    assert_eq!(hits, ["list_orders"], "the visible tool that shares a word");
}

#[test]
fn a_tool_declares_deferral_and_a_hint_the_search_matches() {
    let executor = executor();
    let tools = executor.tools();
    let deferred: Vec<&str> = tools
        .iter()
        .filter(|t| t.deferred())
        .map(|t| t.name())
        .collect();
    assert_eq!(deferred, ["forecast"]);
    // The hint's words find it, though its description has none of them.
    let index = SearchIndex::new(tools.iter().filter(|t| t.deferred()));
    assert_eq!(index.len(), 1);
    assert_eq!(found(&index, "will I need an umbrella"), ["forecast"]);
    // What a client is shown says so.
    let descriptor = serde_json::to_value(tools.get("forecast").unwrap()).unwrap();
    assert_eq!(descriptor["deferred"], true);
    assert_eq!(descriptor["search_hint"], "rain umbrella sunny temperature");
    let plain = serde_json::to_value(tools.get("list_orders").unwrap()).unwrap();
    assert!(plain.get("deferred").is_none() && plain.get("search_hint").is_none());
}

#[test]
fn the_registry_defers_a_tag_a_namespace_or_a_tool_and_keeps_it_in_its_state() {
    let registry = Registry::new(catalog());
    let imported = DynamicTool::builder("docs.search", "search_docs")
        .description("Search the product documentation.")
        .effect(Effect::Read)
        .defer(true)
        .search_hint("manual handbook")
        .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
        .handler(|_| Box::pin(async { Ok(json!([])) }))
        .build()
        .unwrap();
    registry.register(imported).unwrap();
    let deferred = |registry: &Registry| -> Vec<String> {
        let tools = registry.tools();
        let mut names: Vec<String> = tools
            .iter()
            .filter(|t| t.deferred())
            .map(|t| t.name().to_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(deferred(&registry), ["forecast", "search_docs"]);

    // A whole namespace, then one tool back up front.
    registry.defer(&Selector::namespace("shop"), true).unwrap();
    registry.defer(&Selector::name("forecast"), false).unwrap();
    assert_eq!(
        deferred(&registry),
        ["cancel_order", "list_orders", "search_docs"]
    );
    assert!(registry.defer(&Selector::tag("nothing"), true).is_err());

    // Kept in the state, restored elsewhere, other overrides untouched.
    let state = registry.state();
    let shown = serde_json::to_value(&state).unwrap();
    assert_eq!(
        shown["tools"]["weather.forecast"]["override"]["deferred"],
        false
    );
    let other = Registry::new(catalog());
    other.restore(&state).unwrap();
    assert_eq!(deferred(&other), ["cancel_order", "list_orders"]);
}

#[tokio::test]
async fn a_deferred_tool_is_called_like_any_other() {
    // Deferral saves tokens; it is no permission, and no obstacle.
    let executor = executor();
    let answer = executor
        .invoke("forecast", json!({"city": "Oslo"}), &())
        .await
        .unwrap();
    assert_eq!(answer, json!("Oslo"));
    let reader = executor.view(View::new(Selector::effect(Effect::Destructive)));
    let refused = reader
        .invoke("forecast", json!({"city": "Oslo"}), &())
        .await;
    assert!(refused.is_err(), "called outside the caller's view");
}

#[test]
fn a_conversation_without_deferral_finds_tools_within_its_view_and_keeps_them() {
    use toolwright::providers::{Format, FoundTools};
    let executor = executor();
    let names = |list: &serde_json::Value| -> Vec<String> {
        list[0]["functionDeclarations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // A reader's view: the forecast (deferred) and the orders.
    let reader = executor.view(View::new(Selector::effect(Effect::Read)));
    let tools = reader.tools();
    let mut found = FoundTools::new();
    let first = found.export(&tools, Format::Gemini).unwrap();
    assert_eq!(names(&first), ["list_orders", "search_tools"]);
    let refused = found.search(&tools, &json!({"limit": 3}));
    assert!(refused["error"].as_str().unwrap().contains("query"));
    let answer = found.search(&tools, &json!({"query": "rain in Oslo"}));
    assert_eq!(answer["tools"][0]["name"], "forecast");
    assert!(found.contains("weather.forecast"));
    assert_eq!(
        names(&found.export(&tools, Format::Gemini).unwrap()),
        ["list_orders", "forecast"]
    );
    // Kept beside the conversation, and back.
    let kept: FoundTools = serde_json::from_value(serde_json::to_value(&found).unwrap()).unwrap();
    assert_eq!(kept, found);
    // A view without the forecast finds nothing of it.
    let shop = executor.view(View::new(Selector::namespace("shop")));
    let mut other = FoundTools::new();
    let nothing = other.search(&shop.tools(), &json!({"query": "rain umbrella forecast"}));
    assert_eq!(nothing["tools"], json!([]));
}

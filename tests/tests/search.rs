//! Searching tools: ranked by what a caller asks, within what the caller
//! may list; a tool the caller's view hides is never found.

use toolwright::registry::{SearchIndex, Selector, View};
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
#[tool(key = "weather.forecast", effect = read, authorize = public, tags = ["outdoors"])]
async fn forecast(city: String) -> String {
    city
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<CancelOrderArgs>()
        .register::<ListOrdersArgs>()
        .register::<ForecastArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
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

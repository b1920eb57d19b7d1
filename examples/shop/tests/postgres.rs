//! The shop on PostgreSQL, as `DATABASE_URL=postgres://...` runs it: a
//! write waits for a manager and runs once, and two shops opened on one
//! database (two replicas) share the tokens, the approvals, the
//! idempotency keys and the tools' states.
//!
//! PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL`, or
//! `postgres://postgres@127.0.0.1:5432/test`; each test works in a schema
//! of its own, chosen through the URL. Unreachable, a test says it is
//! skipped, and with `CI=true` it fails.

#[path = "../../../tests/tests/databases/mod.rs"]
mod databases;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shop::tokens::Tokens;
use shop::{Shop, open_database};
use toolwright::CallError;
use toolwright::approval::{ApprovalId, Status};
use toolwright::registry::{Reason, Selector};

/// A URL of the tests' PostgreSQL whose search path is a new, empty schema
/// of the test's own, or `None` (said in one line) when the database
/// cannot be reached outside CI.
async fn database_url(test: &str) -> Option<String> {
    const PREFIX: &str = "shop_pg_";
    databases::postgres_pool(PREFIX, test).await?.close().await;
    // As `databases::postgres_options` reads it.
    let url = std::env::var("TOOLWRIGHT_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let separator = if url.contains('?') { '&' } else { '?' };
    Some(format!(
        "{url}{separator}options=-c%20search_path%3D{PREFIX}{test}"
    ))
}

async fn open(url: &str) -> Shop {
    Shop::new(open_database(url).await.unwrap()).await.unwrap()
}

async fn count(shop: &Shop, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&shop.pool).await.unwrap()
}

async fn call(shop: &Shop, who: &str, name: &str, args: Value) -> Result<Value, CallError> {
    let caller = shop.caller(who).await.unwrap();
    shop.executor.invoke(name, args, &caller).await
}

/// Calls, expects the call to wait for approval; the request's id.
async fn request(shop: &Shop, who: &str, name: &str, args: Value) -> ApprovalId {
    match call(shop, who, name, args).await {
        Err(CallError::ApprovalRequired(request)) => request.id.expect("the ledger recorded it"),
        other => panic!("expected ApprovalRequired, got {other:?}"),
    }
}

async fn approve(shop: &Shop, id: ApprovalId, who: &str) {
    let by = shop.caller(who).await.unwrap();
    let approval = shop.approve(id, &by, "").await.unwrap();
    assert_eq!(approval.status, Status::Approved);
}

fn anvils(quantity: i64) -> Value {
    json!({"tenant_id": 1, "product_id": 1, "quantity": quantity})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_waits_for_a_manager_and_runs_once_on_postgres() {
    let Some(url) = database_url("write_runs_once").await else {
        return;
    };
    let shop = open(&url).await;
    // The seed, and a search that ignores case as it does on SQLite.
    let found = call(&shop, "alice", "list_products", json!({"search": "anvil"}))
        .await
        .unwrap();
    assert_eq!(found[0]["name"], "Anvil", "{found}");

    let id = request(&shop, "alice", "place_order", anvils(2)).await;
    assert_eq!(count(&shop, "SELECT COUNT(*) FROM orders").await, 0);
    approve(&shop, id, "bob").await;
    let order = call(&shop, "alice", "place_order", anvils(2))
        .await
        .unwrap();
    assert_eq!(
        (&order["total_cents"], &order["cancelled"]),
        (&json!(9998), &json!(false))
    );
    let replay = request(&shop, "alice", "place_order", anvils(2)).await;
    assert_ne!(replay, id, "a replay is a new request");
    assert_eq!(count(&shop, "SELECT COUNT(*) FROM orders").await, 1);
    assert_eq!(
        count(&shop, "SELECT stock FROM products WHERE id = 1").await,
        10
    );
    assert_eq!(
        shop.approvals.get(id).await.unwrap().status,
        Status::Settled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_share_tokens_approvals_keys_and_tool_states() {
    let Some(url) = database_url("two_replicas").await else {
        return;
    };
    let (one, two) = tokio::join!(open(&url), open(&url));
    assert_ne!(one.replica(), two.replica());
    assert!(one.replica().is_some(), "PostgreSQL shares the registry");

    // A token issued through one lets its bearer in through the other.
    let issued = Tokens::new(one.pool.clone())
        .issue("bob", Duration::from_secs(3600))
        .await
        .unwrap();
    let caller = Tokens::new(two.pool.clone())
        .caller(&issued.token)
        .await
        .unwrap();
    assert_eq!(
        (caller.actor.name.as_str(), caller.actor.manager),
        ("bob", true)
    );

    // Asked on one, approved on the other, run on the first, once; the
    // same idempotency key sent to the other answers without running.
    let id = request(&one, "alice", "place_order", anvils(1)).await;
    approve(&two, id, "bob").await;
    let alice = one.caller("alice").await.unwrap();
    let first = one
        .executor
        .invoke_idempotent("order-1", "place_order", anvils(1), &alice)
        .await
        .unwrap();
    let again = two
        .executor
        .invoke_idempotent("order-1", "place_order", anvils(1), &alice)
        .await
        .unwrap();
    assert_eq!(first, again);
    assert_eq!(count(&two, "SELECT COUNT(*) FROM orders").await, 1);

    // A tool disabled through one is disabled on the other, within moments.
    let reason = Reason::new("the payment provider is down").by("ops");
    one.executor
        .registry()
        .disable(&Selector::name("place_order"), reason)
        .unwrap();
    let started = Instant::now();
    while two.executor.registry().is_enabled("place_order") != Some(false) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the other replica never heard of the disable"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    println!(
        "disabled on the other replica after {:?}",
        started.elapsed()
    );
    let refused = call(&two, "alice", "place_order", anvils(1))
        .await
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "tool `orders.place` is disabled: the payment provider is down"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_starting_at_once_on_an_empty_database_seed_it_once() {
    let Some(url) = database_url("start_at_once").await else {
        return;
    };
    let (one, two, three) = tokio::join!(open(&url), open(&url), open(&url));
    for shop in [&one, &two, &three] {
        assert_eq!(count(shop, "SELECT COUNT(*) FROM actors").await, 4);
        assert_eq!(count(shop, "SELECT COUNT(*) FROM products").await, 4);
    }
}

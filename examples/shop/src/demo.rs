//! The narrated demo `cargo run -p shop` runs on a fresh in-memory
//! database: reads, writes that wait for a manager, a failing write that
//! rolls back, views, an operator switching a tool off, the policy, and
//! what the database and the ledger hold at the end.

use serde_json::{Value, json};
use toolwright::approval::{ApprovalId, Status};
use toolwright::{
    BoxError, CallError,
    approval::ApprovalRequest,
    registry::{Reason, Selector},
};

use crate::app::Shop;
use crate::table::{print_catalog, print_json_table, print_table, sorted};

/// The narrated demo `shop` runs with no arguments.
pub(crate) async fn run(shop: &Shop) -> Result<(), BoxError> {
    println!(
        "The shop: {} tools over SQLite\n",
        shop.executor.tools().len()
    );
    print_catalog(&shop.executor.tools());

    println!("\n== Reads: each actor sees their own tenant");
    step(
        shop,
        "alice",
        "list_products",
        json!({}),
        "tenant 1's products",
    )
    .await?;
    step(
        shop,
        "carol",
        "get_product",
        json!({"tenant_id": 1, "product_id": 1}),
        "carol is tenant 2",
    )
    .await?;
    step(
        shop,
        "alice",
        "place_order",
        json!({"tenant_id": 1, "product_id": 1, "quantity": 0}),
        "no such quantity",
    )
    .await?;

    println!("\n== Writes wait for a person, then run exactly once");
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 2});
    let id = step(shop, "alice", "place_order", order.clone(), "a write").await?;
    decide(shop, id, "bob", None).await?;
    step(
        shop,
        "alice",
        "place_order",
        order.clone(),
        "the approved call",
    )
    .await?;
    step(shop, "alice", "place_order", order, "a replay").await?;
    let three = json!({"tenant_id": 1, "product_id": 1, "quantity": 3});
    let id = step(
        shop,
        "alice",
        "place_order",
        three.clone(),
        "another quantity",
    )
    .await?;
    decide(shop, id, "bob", Some("two will do")).await?;
    step(shop, "alice", "place_order", three, "rejected").await?;

    println!("\n== A write that fails leaves nothing behind");
    let too_many = json!({"tenant_id": 1, "product_id": 2, "quantity": 5});
    let id = step(shop, "alice", "place_order", too_many.clone(), "3 in stock").await?;
    decide(shop, id, "bob", None).await?;
    step(
        shop,
        "alice",
        "place_order",
        too_many,
        "approved, but out of stock",
    )
    .await?;

    println!("\n== Only managers are shown, and may call, the price tool");
    for who in ["alice", "bob"] {
        let caller = shop.caller(who).await?;
        let tools = shop.executor_for(&caller.actor).tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        println!("  {who} sees {}", names.join(", "));
    }
    let price = json!({"tenant_id": 1, "product_id": 3, "price_cents": 2750});
    step(
        shop,
        "alice",
        "set_price",
        price.clone(),
        "not in alice's view",
    )
    .await?;
    let id = step(shop, "bob", "set_price", price.clone(), "bob is").await?;
    // Four eyes: another manager of the tenant decides.
    decide(shop, id, "bob", None).await?;
    decide(shop, id, "dave", None).await?;
    step(shop, "bob", "set_price", price, "approved").await?;

    println!("\n== An operator switches a tool off, with a reason; no redeploy");
    let registry = shop.executor.registry();
    let reason = Reason::new("the payment provider is down").by("ops");
    registry.disable(&Selector::name("place_order"), reason)?;
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 1});
    step(
        shop,
        "alice",
        "place_order",
        order,
        "the model is told it is unavailable",
    )
    .await?;
    let why = registry.tools().disabled("place_order").cloned();
    if let Some(why) = why {
        println!(
            "  (the application sees why: {:?}, by {:?})",
            why.reason, why.by
        );
    }
    registry.enable(&Selector::name("place_order"))?;

    println!("\n== The policy asks a person before anything destructive");
    let cancel = json!({"tenant_id": 1, "order_id": 1});
    if let (Some(policy), Some(tool)) = (registry.policy(), registry.tools().get("cancel_order")) {
        let (decision, rule) = policy.decide(tool, &cancel);
        println!("  (the policy: {decision}, by the rule {rule:?})");
    }
    let id = step(
        shop,
        "alice",
        "cancel_order",
        cancel.clone(),
        "waits for a person",
    )
    .await?;
    decide(shop, id, "bob", None).await?;
    step(shop, "alice", "cancel_order", cancel, "approved").await?;

    println!("\n== What the database holds now");
    let products: Vec<(i64, i64, String, i64, i64)> =
        sqlx::query_as("SELECT id, tenant, name, price_cents, stock FROM products ORDER BY id")
            .fetch_all(&shop.pool)
            .await?;
    print_table(
        &["product", "tenant", "name", "price", "stock"],
        &products
            .into_iter()
            .map(|(id, tenant, name, price, stock)| {
                vec![
                    id.to_string(),
                    tenant.to_string(),
                    name,
                    format!("{}.{:02}", price / 100, price % 100),
                    stock.to_string(),
                ]
            })
            .collect::<Vec<_>>(),
    );
    println!();
    let orders: Vec<(i64, i64, i64, i64, String)> = sqlx::query_as(
        "SELECT id, product_id, quantity, total_cents, placed_by FROM orders ORDER BY id",
    )
    .fetch_all(&shop.pool)
    .await?;
    print_table(
        &["order", "product", "quantity", "total", "placed by"],
        &orders
            .into_iter()
            .map(|(id, product, quantity, total, by)| {
                vec![
                    id.to_string(),
                    product.to_string(),
                    quantity.to_string(),
                    format!("{}.{:02}", total / 100, total % 100),
                    by,
                ]
            })
            .collect::<Vec<_>>(),
    );
    println!();
    print_ledger(shop).await?;
    println!(
        "\nOne order placed, then cancelled (its stock is back); the out-of-stock order rolled back; one price changed.\nThe ledger keeps who asked, who decided, and how each approved call ended."
    );
    Ok(())
}

/// Runs one call in the demo and narrates it; returns the request's id when
/// the call waits for approval.
async fn step(
    shop: &Shop,
    who: &str,
    name: &str,
    arguments: Value,
    why: &str,
) -> Result<Option<ApprovalId>, BoxError> {
    let caller = shop.caller(who).await?;
    println!("\n> {who} calls {name} {arguments}   ({why})");
    let executor = shop.executor_for(&caller.actor);
    let result = executor.invoke(name, arguments, &caller).await;
    let id = match &result {
        Err(CallError::ApprovalRequired(request)) => request.id,
        _ => None,
    };
    match &result {
        Ok(Value::Array(rows)) if rows.iter().all(Value::is_object) && !rows.is_empty() => {
            println!("  ok:");
            print_json_table(rows);
        }
        Ok(value) => println!("  ok: {}", sorted(value)),
        Err(CallError::ApprovalRequired(request)) => println!("  {}", waiting(request)),
        Err(error @ CallError::Tool { .. }) => {
            let cause = std::error::Error::source(error).map(ToString::to_string);
            println!("  failed and rolled back: {}", cause.unwrap_or_default());
        }
        Err(error) => println!("  refused: {}", error.model_message()),
    }
    Ok(id)
}

/// What a call waiting for approval tells its caller.
fn waiting(request: &ApprovalRequest) -> String {
    match request.id {
        Some(id) => format!("waits for approval: request {id}"),
        None => "waits for a person, with nothing recorded to approve".into(),
    }
}

/// `by` approves (or rejects, with a reason) request `id` and the demo says
/// how that went: a refusal is part of the story.
async fn decide(
    shop: &Shop,
    id: Option<ApprovalId>,
    by: &str,
    reject: Option<&str>,
) -> Result<(), BoxError> {
    let id = id.ok_or("expected the call to wait for approval")?;
    let caller = shop.caller(by).await?;
    let (verb, decided) = match reject {
        None => ("approves", shop.approve(id, &caller, "").await),
        Some(reason) => ("rejects", shop.reject(id, &caller, reason).await),
    };
    match decided {
        Ok(approval) => match approval.reason {
            Some(reason) => println!("  {by} {verb} request {id}: {reason:?}"),
            None => println!("  {by} {verb} request {id}"),
        },
        Err(error) => println!("  {by} {verb} request {id}: refused, {error}"),
    }
    Ok(())
}

/// Every request in the ledger, whatever became of it.
async fn print_ledger(shop: &Shop) -> Result<(), BoxError> {
    let mut requests = Vec::new();
    for status in [
        Status::Pending,
        Status::Approved,
        Status::Rejected,
        Status::Consumed,
        Status::Settled,
    ] {
        requests.extend(shop.approvals.list(status).await?);
    }
    requests.sort_by_key(|a| a.id);
    let rows: Vec<Vec<String>> = requests
        .into_iter()
        .map(|a| {
            vec![
                a.id.to_string(),
                a.request.name,
                a.requested_by,
                a.decided_by.unwrap_or_default(),
                a.status.to_string(),
                a.settlement.map(|s| s.to_string()).unwrap_or_default(),
            ]
        })
        .collect();
    print_table(
        &[
            "request",
            "tool",
            "asked by",
            "decided by",
            "status",
            "call",
        ],
        &rows,
    );
    Ok(())
}

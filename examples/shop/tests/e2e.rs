//! End to end on a real SQLite database: what commits, what rolls back, what
//! an approval allows, and what a denied read never touches.

use std::time::Duration;

use serde_json::{Value, json};
use shop::app::{MODULES, Tx};
use shop::{Caller, Shop, ShopError, open_database};
use toolwright::approval::{ApprovalId, LedgerError, Settlement, Status};
use toolwright::{
    CallError, Catalog, Inject, Invocation,
    registry::{Decision, Reason, Selector},
    tool,
};

async fn yes<A>(_: &Caller, _: &Invocation<'_, A>) -> bool {
    true
}

/// Writes an order row, then panics.
#[tool(key = "test.insert_then_panic", effect = write, authorize = yes, approve = yes)]
async fn insert_then_panic(tx: Inject<Tx>) -> bool {
    insert_order(&tx).await;
    panic!("the tool broke after writing")
}

/// Writes an order row, then takes longer than its timeout.
#[tool(key = "test.insert_then_hang", effect = write, authorize = yes, approve = yes, timeout = "100ms")]
async fn insert_then_hang(tx: Inject<Tx>) -> bool {
    insert_order(&tx).await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    true
}

/// Writes an order row, then waits until its caller gives up.
#[tool(key = "test.insert_then_wait", effect = write, authorize = yes, approve = yes)]
async fn insert_then_wait(tx: Inject<Tx>) -> bool {
    insert_order(&tx).await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    true
}

/// Writes an order for a product that does not exist, with the foreign key
/// checked at commit: the body succeeds, the commit fails.
#[tool(key = "test.insert_orphan", effect = write, authorize = yes, approve = yes)]
async fn insert_orphan(tx: Inject<Tx>) -> bool {
    let mut conn = tx.conn().await;
    sqlx::query("PRAGMA defer_foreign_keys = ON")
        .execute(&mut *conn)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO orders (tenant, product_id, quantity, total_cents, placed_by) VALUES (1, 999999, 1, 4999, 'test')",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
    true
}

async fn insert_order(tx: &Tx) {
    let mut conn = tx.conn().await;
    sqlx::query(
        "INSERT INTO orders (tenant, product_id, quantity, total_cents, placed_by) VALUES (1, 1, 1, 4999, 'test')",
    )
    .execute(&mut *conn)
    .await
    .unwrap();
}

async fn shop() -> Shop {
    let pool = open_database("sqlite::memory:").await.unwrap();
    let catalog = Catalog::discover_in(MODULES.into_iter().chain(["e2e"])).unwrap();
    Shop::with_catalog(pool, catalog).await.unwrap()
}

async fn count(shop: &Shop, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&shop.pool).await.unwrap()
}

async fn orders(shop: &Shop) -> i64 {
    count(shop, "SELECT COUNT(*) FROM orders").await
}

async fn call(shop: &Shop, who: &str, name: &str, args: Value) -> Result<Value, CallError> {
    let caller = shop.caller(who).await.unwrap();
    shop.executor.invoke(name, args, &caller).await
}

/// Calls, expects the call to wait for approval; the request's id.
async fn request(shop: &Shop, who: &str, name: &str, args: Value) -> ApprovalId {
    match call(shop, who, name, args).await {
        Err(CallError::ApprovalRequired(request)) => {
            assert_eq!(request.requested_by.as_deref(), Some(who));
            request.id.expect("the ledger recorded the request")
        }
        other => panic!("expected ApprovalRequired, got {other:?}"),
    }
}

/// `who` decides request `id` (approves it, or rejects it with `reject`).
async fn decide(
    shop: &Shop,
    id: ApprovalId,
    who: &str,
    reject: Option<&str>,
) -> Result<Status, ShopError> {
    let by = shop.caller(who).await.unwrap();
    let decided = match reject {
        None => shop.approve(id, &by, "").await?,
        Some(reason) => shop.reject(id, &by, reason).await?,
    };
    Ok(decided.status)
}

/// Calls, expects a pending approval, has `approver` approve it.
async fn request_and_approve(
    shop: &Shop,
    who: &str,
    name: &str,
    args: Value,
    approver: &str,
) -> ApprovalId {
    let id = request(shop, who, name, args).await;
    assert_eq!(
        decide(shop, id, approver, None).await.unwrap(),
        Status::Approved
    );
    id
}

fn anvils(quantity: i64) -> Value {
    json!({"tenant_id": 1, "product_id": 1, "quantity": quantity})
}

#[tokio::test]
async fn an_approved_write_commits() {
    let shop = shop().await;
    request_and_approve(&shop, "alice", "place_order", anvils(2), "bob").await;
    let order = call(&shop, "alice", "place_order", anvils(2))
        .await
        .unwrap();
    assert_eq!(order["total_cents"], 9998);
    assert_eq!(orders(&shop).await, 1);
    assert_eq!(
        count(&shop, "SELECT stock FROM products WHERE id = 1").await,
        10
    );
}

#[tokio::test]
async fn a_write_that_fails_after_inserting_leaves_no_rows() {
    let shop = shop().await;
    let too_many = json!({"tenant_id": 1, "product_id": 2, "quantity": 5});
    request_and_approve(&shop, "alice", "place_order", too_many.clone(), "bob").await;
    let error = call(&shop, "alice", "place_order", too_many)
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::Tool { .. }), "{error:?}");
    let source = std::error::Error::source(&error).unwrap();
    assert_eq!(source.to_string(), "only 3 in stock");
    assert_eq!(orders(&shop).await, 0, "the inserted order rolled back");
    assert_eq!(
        count(&shop, "SELECT stock FROM products WHERE id = 2").await,
        3
    );
}

#[tokio::test]
async fn a_panicking_write_leaves_no_rows() {
    let shop = shop().await;
    let error = call(&shop, "alice", "insert_then_panic", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::Panicked { .. }), "{error:?}");
    assert_eq!(orders(&shop).await, 0);
}

#[tokio::test]
async fn a_timed_out_write_leaves_no_rows() {
    let shop = shop().await;
    let error = call(&shop, "alice", "insert_then_hang", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(error, CallError::Timeout { .. }), "{error:?}");
    assert_eq!(orders(&shop).await, 0);
}

#[tokio::test]
async fn an_approval_runs_the_call_once_and_a_replay_needs_another() {
    let shop = shop().await;
    let id = request_and_approve(&shop, "alice", "place_order", anvils(1), "bob").await;
    call(&shop, "alice", "place_order", anvils(1))
        .await
        .unwrap();
    let replay = request(&shop, "alice", "place_order", anvils(1)).await;
    assert_ne!(replay, id, "a replay is a new request");
    assert_eq!(orders(&shop).await, 1, "ran exactly once");
    let used = shop.approvals.get(id).await.unwrap();
    assert_eq!(
        (used.status, used.settlement),
        (Status::Settled, Some(Settlement::Succeeded))
    );
    let pending = shop.approvals.pending().await.unwrap();
    assert_eq!(pending.iter().map(|a| a.id).collect::<Vec<_>>(), [replay]);
}

#[tokio::test]
async fn a_rejected_call_is_refused_and_never_runs() {
    let shop = shop().await;
    let id = request(&shop, "alice", "place_order", anvils(3)).await;
    let status = decide(&shop, id, "bob", Some("two will do")).await.unwrap();
    assert_eq!(status, Status::Rejected);
    let refused = call(&shop, "alice", "place_order", anvils(3)).await;
    assert!(
        matches!(refused, Err(CallError::NotApproved { .. })),
        "{refused:?}"
    );
    assert_eq!(orders(&shop).await, 0);
    let rejected = shop.approvals.get(id).await.unwrap();
    assert_eq!(rejected.reason.as_deref(), Some("two will do"));
}

#[tokio::test]
async fn a_changed_argument_after_approval_needs_its_own_approval() {
    let shop = shop().await;
    request_and_approve(&shop, "alice", "place_order", anvils(1), "bob").await;
    let changed = call(&shop, "alice", "place_order", anvils(9)).await;
    assert!(
        matches!(changed, Err(CallError::ApprovalRequired(_))),
        "{changed:?}"
    );
    // Another key order is the same call, and the approval still holds.
    let same = call(
        &shop,
        "alice",
        "place_order",
        json!({"quantity": 1, "product_id": 1, "tenant_id": 1}),
    )
    .await;
    assert!(same.is_ok(), "{same:?}");
    assert_eq!(orders(&shop).await, 1);
}

#[tokio::test]
async fn a_denied_read_runs_no_query() {
    let shop = shop().await;
    let before = shop.transactions_begun();
    let denied = call(
        &shop,
        "carol",
        "get_product",
        json!({"tenant_id": 1, "product_id": 1}),
    )
    .await;
    assert!(
        matches!(denied, Err(CallError::Denied { .. })),
        "{denied:?}"
    );
    assert_eq!(
        shop.transactions_begun(),
        before,
        "no transaction, so no query"
    );
    // The same read by someone of tenant 1 does touch the database.
    let allowed = call(
        &shop,
        "alice",
        "get_product",
        json!({"tenant_id": 1, "product_id": 1}),
    )
    .await;
    assert_eq!(allowed.unwrap()["sku"], "ACME-ANVIL");
    assert_eq!(shop.transactions_begun(), before + 1);
}

#[tokio::test]
async fn reads_see_only_the_callers_tenant() {
    let shop = shop().await;
    let alices = call(&shop, "alice", "list_products", json!({}))
        .await
        .unwrap();
    let carols = call(&shop, "carol", "list_products", json!({}))
        .await
        .unwrap();
    assert_eq!(alices.as_array().unwrap().len(), 3);
    assert_eq!(carols.as_array().unwrap().len(), 1);
    assert_eq!(carols[0]["sku"], "GLX-LAMP");
}

#[tokio::test]
async fn only_a_manager_may_change_a_price() {
    let shop = shop().await;
    let price = json!({"tenant_id": 1, "product_id": 3, "price_cents": 2750});
    let denied = call(&shop, "alice", "set_price", price.clone()).await;
    assert!(matches!(denied, Err(CallError::Denied { .. })));
    request_and_approve(&shop, "bob", "set_price", price.clone(), "dave").await;
    let changed = call(&shop, "bob", "set_price", price).await.unwrap();
    assert_eq!(changed["old_cents"], 2500);
    assert_eq!(
        count(&shop, "SELECT price_cents FROM products WHERE id = 3").await,
        2750
    );
}

#[tokio::test]
async fn the_price_tool_is_outside_a_non_managers_view_on_every_path() {
    let shop = shop().await;
    let alice = shop.caller("alice").await.unwrap();
    let executor = shop.executor_for(&alice.actor);
    assert!(executor.tools().get("set_price").is_none());
    let price = json!({"tenant_id": 1, "product_id": 3, "price_cents": 2750});
    let refused = executor.invoke("set_price", price, &alice).await;
    assert!(
        matches!(refused, Err(CallError::UnknownTool { .. })),
        "{refused:?}"
    );
    let bob = shop.caller("bob").await.unwrap();
    assert!(
        shop.executor_for(&bob.actor)
            .tools()
            .get("set_price")
            .is_some()
    );
    assert_eq!(shop.transactions_begun(), 0, "nothing ran");
}

#[tokio::test]
async fn a_disabled_tool_is_unavailable_until_enabled_again() {
    let shop = shop().await;
    let registry = shop.executor.registry();
    let reason = Reason::new("the payment provider is down").by("ops");
    registry
        .disable(&Selector::name("place_order"), reason)
        .unwrap();
    let refused = call(&shop, "alice", "place_order", anvils(1))
        .await
        .unwrap_err();
    assert_eq!(refused.model_message(), "This tool is unavailable.");
    assert_eq!(
        refused.to_string(),
        "tool `orders.place` is disabled: the payment provider is down"
    );
    assert_eq!(shop.transactions_begun(), 0);
    registry.enable(&Selector::name("place_order")).unwrap();
    let pending = call(&shop, "alice", "place_order", anvils(1)).await;
    assert!(matches!(pending, Err(CallError::ApprovalRequired(_))));
}

#[tokio::test]
async fn the_policy_asks_a_person_before_anything_destructive() {
    let shop = shop().await;
    let policy = shop.executor.registry().policy().unwrap();
    let tools = shop.executor.tools();
    let args = json!({"tenant_id": 1, "order_id": 1});
    let (decision, rule) = policy.decide(tools.get("cancel_order").unwrap(), &args);
    assert_eq!((decision, rule), (&Decision::Ask, Some("ask destructive")));
    let pending = call(&shop, "alice", "cancel_order", args).await;
    assert!(matches!(pending, Err(CallError::ApprovalRequired(_))));
}

#[tokio::test]
async fn cancelling_an_order_returns_its_stock() {
    let shop = shop().await;
    request_and_approve(&shop, "alice", "place_order", anvils(4), "bob").await;
    let order = call(&shop, "alice", "place_order", anvils(4))
        .await
        .unwrap();
    let cancel = json!({"tenant_id": 1, "order_id": order["id"]});
    request_and_approve(&shop, "alice", "cancel_order", cancel.clone(), "bob").await;
    call(&shop, "alice", "cancel_order", cancel).await.unwrap();
    assert_eq!(
        count(&shop, "SELECT stock FROM products WHERE id = 1").await,
        12
    );
    assert_eq!(count(&shop, "SELECT cancelled FROM orders").await, 1);
}

#[tokio::test]
async fn a_file_database_keeps_approvals_between_runs() {
    let dir = std::env::temp_dir().join(format!("shop-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite://{}", dir.join("shop.db").display());
    let first = Shop::new(open_database(&url).await.unwrap()).await.unwrap();
    let id = request_and_approve(&first, "alice", "place_order", anvils(1), "bob").await;
    first.pool.close().await;
    // A second process (here: a second pool) finds the approval and runs the call.
    let second = Shop::new(open_database(&url).await.unwrap()).await.unwrap();
    call(&second, "alice", "place_order", anvils(1))
        .await
        .unwrap();
    assert_eq!(
        second.approvals.get(id).await.unwrap().status,
        Status::Settled
    );
    second.pool.close().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn only_a_manager_of_the_requesters_tenant_approves() {
    let shop = shop().await;
    let id = request(&shop, "alice", "place_order", anvils(1)).await;
    // alice asked and is no manager; carol manages tenant 2.
    let own = decide(&shop, id, "alice", None).await.unwrap_err();
    assert!(
        matches!(own, ShopError::Approval(LedgerError::OwnRequest { .. })),
        "{own:?}"
    );
    let other_tenant = decide(&shop, id, "carol", Some("no")).await.unwrap_err();
    assert!(
        matches!(other_tenant, ShopError::OtherTenant { id: refused } if refused == id),
        "{other_tenant:?}"
    );
    assert_eq!(
        shop.approvals.get(id).await.unwrap().status,
        Status::Pending
    );
    assert_eq!(
        decide(&shop, id, "bob", None).await.unwrap(),
        Status::Approved
    );
}

#[tokio::test]
async fn a_non_manager_cannot_approve() {
    let shop = shop().await;
    let id = request(
        &shop,
        "bob",
        "set_price",
        json!({"tenant_id": 1, "product_id": 3, "price_cents": 2750}),
    )
    .await;
    let refused = decide(&shop, id, "alice", None).await.unwrap_err();
    assert!(
        matches!(
            refused,
            ShopError::Approval(LedgerError::NotAnApprover { .. })
        ),
        "{refused:?}"
    );
    assert_eq!(
        shop.approvals.get(id).await.unwrap().status,
        Status::Pending
    );
}

#[tokio::test]
async fn a_manager_cannot_approve_their_own_request() {
    let shop = shop().await;
    let price = json!({"tenant_id": 1, "product_id": 3, "price_cents": 2750});
    let id = request(&shop, "bob", "set_price", price.clone()).await;
    let own = decide(&shop, id, "bob", None).await.unwrap_err();
    assert_eq!(
        own.to_string(),
        format!("approval {id} was requested by `bob`, who cannot also decide it")
    );
    let still_waiting = call(&shop, "bob", "set_price", price).await;
    assert!(
        matches!(still_waiting, Err(CallError::ApprovalRequired(_))),
        "{still_waiting:?}"
    );
    assert_eq!(
        count(&shop, "SELECT price_cents FROM products WHERE id = 3").await,
        2500
    );
}

#[tokio::test]
async fn a_cancelled_write_leaves_no_rows() {
    let shop = shop().await;
    let caller = shop.caller("alice").await.unwrap();
    let call = shop.executor.invoke("insert_then_wait", json!({}), &caller);
    // The caller gives up: the call is dropped mid-flight.
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    // The rollback was handed to the runtime; wait for it to release the
    // one in-memory connection, then look.
    let mut rows = -1;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if let Ok(Ok(n)) = tokio::time::timeout(
            Duration::from_millis(50),
            sqlx::query_scalar::<_, i64>("SELECT COUNT(*) FROM orders").fetch_one(&shop.pool),
        )
        .await
        {
            rows = n;
            break;
        }
    }
    assert_eq!(rows, 0, "the cancelled call's row rolled back");
}

/// The error of a call whose commit failed: it names the transaction's
/// finalizer and keeps SQLite's error.
fn assert_commit_failed(result: Result<impl std::fmt::Debug, CallError>) {
    match result {
        Err(CallError::Finalizer {
            key,
            finalizer,
            source,
        }) => {
            assert_eq!(key, "test.insert_orphan");
            assert_eq!(finalizer, Some(std::any::type_name::<Tx>()));
            let sqlite = source
                .downcast_ref::<sqlx::Error>()
                .expect("SQLite's error");
            assert!(sqlite.to_string().contains("FOREIGN KEY"), "{sqlite}");
        }
        other => panic!("expected the commit's failure, got {other:?}"),
    }
}

#[tokio::test]
async fn a_commit_that_fails_fails_the_call_on_every_path() {
    let shop = shop().await;
    let caller = shop.caller("alice").await.unwrap();

    assert_commit_failed(
        shop.executor
            .invoke("insert_orphan", json!({}), &caller)
            .await,
    );
    assert_commit_failed(shop.executor.call(InsertOrphanArgs {}, &caller).await);
    assert_eq!(orders(&shop).await, 0, "nothing was written");
    assert_eq!(shop.transactions_begun(), 2);

    // An MCP client is told the call failed, and nothing that reads as success.
    let server = toolwright::mcp::McpServer::new(shop.executor.clone(), "shop", "0");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(caller);
    tokio::spawn(async move {
        if let Ok(running) = rmcp::ServiceExt::serve(handler, server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = rmcp::ServiceExt::serve((), client_io).await.unwrap();
    let result = client
        .call_tool(rmcp::model::CallToolRequestParams::new("insert_orphan"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true), "{result:?}");
    assert_eq!(result.structured_content, None, "{result:?}");
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("The tool failed."), "{text}");
    assert!(!text.contains("true"), "{text}");
    assert_eq!(orders(&shop).await, 0, "nothing was written");
    assert_eq!(shop.transactions_begun(), 3);
}

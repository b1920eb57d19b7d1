// A hook that never waits may be a plain `fn` returning `Verdict`, for
// `authorize` and `approve`, generic over the arguments or not.
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool, executor::Verdict};

struct Actor {
    clerk: bool,
}

fn clerks<A>(actor: &Actor, _: &Invocation<'_, A>) -> Verdict {
    Verdict::from(actor.clerk)
}

fn small(_: &Actor, call: &Invocation<'_, RefundArgs>) -> Verdict {
    if call.amount < 100 {
        Verdict::Allow
    } else {
        Verdict::Pending
    }
}

/// Refund an order.
#[tool(key = "orders.refund", effect = write, authorize = clerks, approve = small)]
async fn refund(order_id: u64, amount: u64) -> u64 {
    order_id + amount
}

/// Look up an order.
#[tool(key = "orders.get", effect = read, authorize = clerks)]
async fn get_order(order_id: u64) -> u64 {
    order_id
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<RefundArgs>()
        .register::<GetOrderArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let clerk = Actor { clerk: true };
    let small = json!({"order_id": 1, "amount": 10});
    assert_eq!(executor.invoke("refund", small, &clerk).await.unwrap(), json!(11));
    let large = json!({"order_id": 1, "amount": 500});
    let pending = executor.invoke("refund", large, &clerk).await.unwrap_err();
    assert!(matches!(pending, CallError::ApprovalRequired(_)));
    let order = json!({"order_id": 3});
    assert_eq!(executor.invoke("get_order", order.clone(), &clerk).await.unwrap(), json!(3));
    let denied = executor.invoke("get_order", order, &Actor { clerk: false }).await;
    assert!(matches!(denied, Err(CallError::Denied { .. })));
}

// An `approve` hook may answer `Verdict`, including `Pending` for a person to decide.
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool, executor::Verdict};

struct Actor;

async fn anyone(_: &Actor, _: &Invocation<'_, RefundArgs>) -> Verdict {
    Verdict::Allow
}

async fn small_or_ask(_: &Actor, call: &Invocation<'_, RefundArgs>) -> Verdict {
    if call.amount < 100 {
        Verdict::Allow
    } else {
        Verdict::Pending
    }
}

/// Refund an order.
#[tool(key = "orders.refund", effect = write, authorize = anyone, approve = small_or_ask)]
async fn refund(order_id: u64, amount: u64) -> u64 {
    order_id + amount
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<RefundArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let small = json!({"order_id": 1, "amount": 10});
    assert_eq!(
        executor.invoke("refund", small, &Actor).await.unwrap(),
        json!(11)
    );
    let large = json!({"order_id": 1, "amount": 500});
    let pending = executor.invoke("refund", large, &Actor).await.unwrap_err();
    assert!(matches!(pending, CallError::ApprovalRequired(_)));
}

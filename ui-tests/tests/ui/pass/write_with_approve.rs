// `write` and `destructive` tools with `approve` hooks; the approval binds the exact arguments.
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool};

struct Actor;

async fn anyone<A>(_: &Actor, _: &Invocation<'_, A>) -> bool {
    true
}

async fn small_amounts(_: &Actor, call: &Invocation<'_, TransferArgs>) -> bool {
    call.amount <= 100
}

async fn never(_: &Actor, _: &Invocation<'_, CloseAccountArgs>) -> bool {
    false
}

/// Transfer money.
#[tool(key = "bank.transfer", effect = write, authorize = anyone, approve = small_amounts)]
async fn transfer(amount: u64) -> u64 {
    amount
}

/// Close the account.
#[tool(key = "bank.close", effect = destructive, authorize = anyone, approve = never)]
async fn close_account() -> bool {
    true
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<TransferArgs>()
        .register::<CloseAccountArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    assert_eq!(
        executor
            .invoke("transfer", json!({"amount": 5}), &Actor)
            .await
            .unwrap(),
        json!(5)
    );
    let refused = executor
        .invoke("transfer", json!({"amount": 500}), &Actor)
        .await
        .unwrap_err();
    assert!(matches!(refused, CallError::NotApproved { .. }));
    let refused = executor
        .invoke("close_account", json!({}), &Actor)
        .await
        .unwrap_err();
    assert!(matches!(refused, CallError::NotApproved { .. }));
}

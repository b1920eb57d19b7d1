// A user struct deriving Serialize, Deserialize and JsonSchema is an input, and can be an output.
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Address {
    street: String,
    city: String,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct Customer {
    name: String,
    address: Address,
}

/// Register a customer.
#[tool(key = "customers.echo", effect = read, authorize = public)]
async fn echo_customer(customer: Customer) -> Customer {
    customer
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<EchoCustomerArgs>()
        .build()
        .unwrap();
    assert!(
        catalog
            .get("echo_customer")
            .unwrap()
            .output_schema()
            .is_some()
    );
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let customer = json!({"name": "Ada", "address": {"street": "1 Main St", "city": "Paris"}});
    let echoed = executor
        .invoke(
            "echo_customer",
            json!({ "customer": customer.clone() }),
            &(),
        )
        .await
        .unwrap();
    assert_eq!(echoed, customer);
}

// An enum input is advertised as its variants, and other values are rejected.
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Sort {
    Newest,
    Cheapest,
}

/// List the products in an order.
#[tool(key = "products.sorted", effect = read, authorize = public)]
async fn sorted(sort: Sort) -> &'static str {
    match sort {
        Sort::Newest => "newest",
        Sort::Cheapest => "cheapest",
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<SortedArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let answer = executor
        .invoke("sorted", json!({"sort": "cheapest"}), &())
        .await
        .unwrap();
    assert_eq!(answer, json!("cheapest"));
    assert!(
        executor
            .invoke("sorted", json!({"sort": "random"}), &())
            .await
            .is_err()
    );
}

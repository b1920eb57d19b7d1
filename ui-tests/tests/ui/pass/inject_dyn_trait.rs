// `Inject<dyn Trait>` is resolved from the container and never appears in the schema.
use std::sync::Arc;

use serde_json::json;
use toolwright::{Catalog, Container, Executor, Inject, tool};

trait Prices: Send + Sync {
    fn price(&self, sku: &str) -> u64;
}

struct Fixed;

impl Prices for Fixed {
    fn price(&self, sku: &str) -> u64 {
        sku.len() as u64
    }
}

/// Price a product.
#[tool(key = "pricing.get", effect = read, authorize = public)]
async fn get_price(sku: String, prices: Inject<dyn Prices>) -> u64 {
    prices.price(&sku)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<GetPriceArgs>()
        .build()
        .unwrap();
    let schema = catalog.get("get_price").unwrap().input_schema();
    assert!(schema["properties"].get("prices").is_none());
    let container = Container::builder()
        .app::<dyn Prices>(Arc::new(Fixed))
        .build();
    let executor = Executor::new(catalog, container).unwrap();
    let price = executor
        .invoke("get_price", json!({"sku": "abc"}), &())
        .await
        .unwrap();
    assert_eq!(price, json!(3));
    let supplied = json!({"sku": "abc", "prices": 1});
    assert!(executor.invoke("get_price", supplied, &()).await.is_err());
}

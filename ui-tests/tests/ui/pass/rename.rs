// `#[rename = "..."]` renames the input field; the Rust name is not accepted.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(#[rename = "productId"] product_id: u64) -> u64 {
    product_id
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<GetProductArgs>()
        .build()
        .unwrap();
    let schema = catalog.get("get_product").unwrap().input_schema();
    assert!(schema["properties"].get("productId").is_some());
    assert!(schema["properties"].get("product_id").is_none());
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let id = executor
        .invoke("get_product", json!({"productId": 7}), &())
        .await
        .unwrap();
    assert_eq!(id, json!(7));
    assert!(
        executor
            .invoke("get_product", json!({"product_id": 7}), &())
            .await
            .is_err()
    );
}

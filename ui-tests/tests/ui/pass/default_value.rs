// `#[default = expr]` makes an input optional with that value.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// List a page of products.
#[tool(key = "products.list", effect = read, authorize = public)]
async fn list_products(page: u32, #[default = 20] per_page: u32) -> (u32, u32) {
    (page, per_page)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<ListProductsArgs>()
        .build()
        .unwrap();
    let required = &catalog.get("list_products").unwrap().input_schema()["required"];
    assert_eq!(required, &json!(["page"]));
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let defaulted = executor
        .invoke("list_products", json!({"page": 2}), &())
        .await
        .unwrap();
    assert_eq!(defaulted, json!([2, 20]));
    let given = executor
        .invoke("list_products", json!({"page": 2, "per_page": 5}), &())
        .await
        .unwrap();
    assert_eq!(given, json!([2, 5]));
}

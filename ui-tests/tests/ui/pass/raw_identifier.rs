// A raw identifier parameter (`r#type`) is the field `type`.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Count the products of a type.
#[tool(key = "products.count", effect = read, authorize = public)]
async fn r#count(r#type: String) -> String {
    r#type
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<CountArgs>().build().unwrap();
    assert!(
        catalog.get("count").unwrap().input_schema()["properties"]
            .get("type")
            .is_some()
    );
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let answer = executor
        .invoke("count", json!({"type": "chair"}), &())
        .await
        .unwrap();
    assert_eq!(answer, json!("chair"));
}

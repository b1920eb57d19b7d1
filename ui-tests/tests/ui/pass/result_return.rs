// A tool returning `Result<T, E>` with a hand-written error: `Ok` is the
// output, `Err` becomes `CallError::Tool` with the error kept as its source.
use std::fmt;

use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, tool};

#[derive(Debug)]
struct NotFound(u64);

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no product {}", self.0)
    }
}

impl std::error::Error for NotFound {}

/// Read a product's name.
#[tool(key = "products.name", effect = read, authorize = public)]
async fn product_name(id: u64) -> Result<String, NotFound> {
    if id == 1 {
        Ok("chair".to_owned())
    } else {
        Err(NotFound(id))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<ProductNameArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let name = executor.call(ProductNameArgs { id: 1 }, &()).await.unwrap();
    assert_eq!(name, "chair");
    let error = executor
        .invoke("product_name", json!({"id": 2}), &())
        .await
        .unwrap_err();
    match error {
        CallError::Tool { source, .. } => {
            assert_eq!(source.downcast_ref::<NotFound>().unwrap().0, 2);
        }
        other => panic!("expected a tool error, got {other:?}"),
    }
}

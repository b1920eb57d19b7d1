// A tool with inputs and a plain return type compiles, registers and runs.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, Tool, tool};

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(AddArgs::KEY, "math.add");
    assert_eq!(AddArgs::NAME, "add");
    assert_eq!(AddArgs::DESCRIPTION, "Add two numbers.");
    let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let sum = executor
        .invoke("add", json!({"a": 2, "b": 3}), &())
        .await
        .unwrap();
    assert_eq!(sum, json!(5));
    assert_eq!(executor.call(AddArgs { a: 1, b: 1 }, &()).await.unwrap(), 2);
    assert_eq!(add(4, 5).await, 9);
}

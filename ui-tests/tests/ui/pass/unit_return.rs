// A tool without a return type returns `()`, serialized as `null`.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Do nothing, successfully.
#[tool(key = "demo.noop", effect = read, authorize = public)]
async fn noop() {}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<NoopArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    assert_eq!(
        executor.invoke("noop", json!({}), &()).await.unwrap(),
        json!(null)
    );
    executor.call(NoopArgs {}, &()).await.unwrap();
}

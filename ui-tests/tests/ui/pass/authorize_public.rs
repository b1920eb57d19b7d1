// `authorize = public` opens a tool to every caller, whatever the context type.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Tell the time of day.
#[tool(key = "clock.hour", effect = read, authorize = public)]
async fn hour() -> u8 {
    12
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<HourArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    assert_eq!(
        executor.invoke("hour", json!({}), &()).await.unwrap(),
        json!(12)
    );
    assert_eq!(
        executor.invoke("hour", json!({}), &"anyone").await.unwrap(),
        json!(12)
    );
}

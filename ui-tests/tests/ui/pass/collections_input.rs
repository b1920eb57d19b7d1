// `Vec<T>` and `HashMap<String, T>` inputs.
use std::collections::HashMap;

use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Price a basket.
#[tool(key = "basket.total", effect = read, authorize = public)]
async fn total(items: Vec<String>, prices: HashMap<String, u64>) -> u64 {
    items.iter().filter_map(|item| prices.get(item)).sum()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<TotalArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let arguments = json!({"items": ["a", "b", "a"], "prices": {"a": 2, "b": 5}});
    assert_eq!(
        executor.invoke("total", arguments, &()).await.unwrap(),
        json!(9)
    );
}

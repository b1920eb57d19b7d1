// An `Option<T>` input is optional: it may be left out, and it is not required in the schema.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Greet someone, by title if given.
#[tool(key = "demo.greet", effect = read, authorize = public)]
async fn greet(name: String, title: Option<String>) -> String {
    match title {
        Some(title) => format!("hello {title} {name}"),
        None => format!("hello {name}"),
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<GreetArgs>().build().unwrap();
    let required = &catalog.get("greet").unwrap().input_schema()["required"];
    assert_eq!(required, &json!(["name"]));
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let plain = executor
        .invoke("greet", json!({"name": "Ada"}), &())
        .await
        .unwrap();
    assert_eq!(plain, json!("hello Ada"));
    let titled = executor
        .invoke("greet", json!({"name": "Ada", "title": "Dr"}), &())
        .await
        .unwrap();
    assert_eq!(titled, json!("hello Dr Ada"));
}

// `Context<C>` receives the caller's context; it is not an input.
use serde_json::json;
use toolwright::{Catalog, Container, Context, Executor, tool};

#[derive(Clone)]
struct Actor {
    name: String,
}

/// Say who is calling.
#[tool(key = "demo.whoami", effect = read, authorize = public)]
async fn whoami(actor: Context<Actor>, greeting: String) -> String {
    format!("{greeting}, {}", actor.name)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<WhoamiArgs>().build().unwrap();
    let schema = catalog.get("whoami").unwrap().input_schema();
    assert!(schema["properties"].get("actor").is_none());
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let actor = Actor {
        name: "Ada".to_owned(),
    };
    let answer = executor
        .invoke("whoami", json!({"greeting": "hi"}), &actor)
        .await
        .unwrap();
    assert_eq!(answer, json!("hi, Ada"));
}

// `#[secret]` marks an input `writeOnly` in the schema (written or derived)
// and masks it in the arguments' `Debug`; the tool still gets the value.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(
    user: String,
    /// The account's password.
    #[secret]
    password: String,
) -> bool {
    user == "ann" && password == "hunter2"
}

/// Call a web hook.
#[tool(key = "hooks.call", effect = read, authorize = public)]
async fn call_hook(
    #[schemars(url)] url: String,
    // An item only schemars' derive reads: the struct's schema is derived.
    #[schemars(extend("x-note" = "rotated monthly"))]
    #[secret]
    #[rename = "apiKey"]
    api_key: String,
) -> usize {
    url.len() + api_key.len()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder()
        .register::<LoginArgs>()
        .register::<CallHookArgs>()
        .build()
        .unwrap();
    let login = catalog.get("login").unwrap().input_schema();
    assert_eq!(login["properties"]["password"]["writeOnly"], json!(true));
    assert_eq!(
        login["properties"]["password"]["description"],
        "The account's password."
    );
    assert!(login["properties"]["user"].get("writeOnly").is_none());
    let hook = catalog.get("call_hook").unwrap().input_schema();
    assert_eq!(hook["properties"]["apiKey"]["writeOnly"], json!(true));
    assert_eq!(hook["properties"]["apiKey"]["x-note"], "rotated monthly");
    assert!(hook["properties"]["url"].get("writeOnly").is_none());

    let shown = format!("{:?}", LoginArgs { user: "ann".into(), password: "hunter2".into() });
    assert_eq!(shown, r#"LoginArgs { user: "ann", password: "[redacted]" }"#);
    let shown = format!("{:?}", CallHookArgs { url: "u".into(), api_key: "k-1".into() });
    assert_eq!(shown, r#"CallHookArgs { url: "u", apiKey: "[redacted]" }"#);

    let executor = Executor::new(catalog, Container::default()).unwrap();
    let signed_in = executor
        .invoke("login", json!({"user": "ann", "password": "hunter2"}), &())
        .await
        .unwrap();
    assert_eq!(signed_in, json!(true));
}

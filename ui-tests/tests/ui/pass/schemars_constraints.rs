// `#[schemars(range, length, regex)]` constraints are advertised and enforced.
use serde_json::json;
use toolwright::{Catalog, Container, Executor, tool};

/// Search the products.
#[tool(key = "products.search", effect = read, authorize = public)]
async fn search(
    #[schemars(length(min = 1, max = 40))] query: String,
    #[schemars(range(min = 1, max = 10))] limit: u32,
    #[schemars(regex(pattern = r"^[A-Z]{2}$"))] country: String,
) -> String {
    format!("{query}/{limit}/{country}")
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let catalog = Catalog::builder().register::<SearchArgs>().build().unwrap();
    let properties = catalog.get("search").unwrap().input_schema()["properties"].clone();
    assert_eq!(properties["limit"]["maximum"], 10);
    assert_eq!(properties["query"]["minLength"], 1);
    assert_eq!(properties["country"]["pattern"], "^[A-Z]{2}$");
    let executor = Executor::new(catalog, Container::builder().build()).unwrap();
    let ok = json!({"query": "chair", "limit": 3, "country": "FR"});
    assert_eq!(
        executor.invoke("search", ok, &()).await.unwrap(),
        json!("chair/3/FR")
    );
    let too_many = json!({"query": "chair", "limit": 11, "country": "FR"});
    assert!(executor.invoke("search", too_many, &()).await.is_err());
    let bad_country = json!({"query": "chair", "limit": 3, "country": "france"});
    assert!(executor.invoke("search", bad_country, &()).await.is_err());
}

// An input type must implement `Deserialize`.
use toolwright::tool;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Filter {
    word: String,
}

/// Search the products.
#[tool(key = "products.search", effect = read, authorize = public)]
async fn search(filter: Filter) -> Vec<u64> {
    let _ = filter.word;
    Vec::new()
}

fn main() {}

// An input type must implement `JsonSchema`.
use toolwright::tool;

#[derive(serde::Serialize, serde::Deserialize)]
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

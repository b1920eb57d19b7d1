// `#[default]` describes an input; on an injected parameter it is rejected.
use toolwright::{Inject, tool};

struct Db;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(
    id: u64,
    #[default = Inject::new(std::sync::Arc::new(Db))] db: Inject<Db>,
) -> u64 {
    let _ = db;
    id
}

fn main() {}

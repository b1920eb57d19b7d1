// An input renamed to the name of an injected parameter is rejected on the new name.
use toolwright::{Inject, tool};

struct Db;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(#[rename = "db"] id: u64, db: Inject<Db>) -> u64 {
    let _ = db;
    id
}

fn main() {}

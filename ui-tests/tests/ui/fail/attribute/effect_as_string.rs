// `effect` is a bare word; a quoted "read" is rejected with the fix.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = "read", authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

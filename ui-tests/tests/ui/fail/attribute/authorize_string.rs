// `authorize` names a hook by path, not by string; the error shows the fix.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = "can_read")]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

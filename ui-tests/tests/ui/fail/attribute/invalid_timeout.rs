// `timeout` is a number with a unit; "soon" is rejected on the string.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public, timeout = "soon")]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

// A hook path that does not exist is reported on the path.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = can_read)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

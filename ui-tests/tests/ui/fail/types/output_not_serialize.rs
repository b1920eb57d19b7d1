// A tool's result must implement `Serialize`.
use toolwright::tool;

struct Product {
    id: u64,
}

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(id: u64) -> Product {
    Product { id }
}

fn main() {}

// A name with a space breaks every provider's rule; the error points at the string.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", name = "get product", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

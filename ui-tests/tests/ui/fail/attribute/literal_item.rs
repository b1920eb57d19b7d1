use toolwright::tool;

/// Read a product.
#[tool("products.get", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

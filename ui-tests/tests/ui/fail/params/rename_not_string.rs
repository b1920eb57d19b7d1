use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(#[rename = productId] id: u64) -> u64 {
    id
}

fn main() {}

// A name longer than 64 characters is rejected (65 here).
use toolwright::tool;

/// Read a product.
#[tool(
    key = "products.get",
    name = "a2345678901234567890123456789012345678901234567890123456789012345",
    effect = read,
    authorize = public
)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

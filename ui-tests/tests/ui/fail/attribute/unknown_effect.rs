// `effect` is one of `read`, `write`, `destructive`; anything else is underlined, with a did-you-mean.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = reads, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

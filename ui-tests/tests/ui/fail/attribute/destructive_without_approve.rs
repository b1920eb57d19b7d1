// A `destructive` tool needs an `approve` hook; the error points at `destructive`.
use toolwright::tool;

/// Delete a product.
#[tool(key = "products.delete", effect = destructive, authorize = public)]
async fn delete_product(id: u64) -> bool {
    let _ = id;
    true
}

fn main() {}

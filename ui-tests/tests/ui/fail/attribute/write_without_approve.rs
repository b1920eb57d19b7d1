// A `write` tool needs an `approve` hook; the error points at `write`.
use toolwright::tool;

/// Rename a product.
#[tool(key = "products.rename", effect = write, authorize = public)]
async fn rename_product(id: u64, name: String) -> bool {
    let _ = (id, name);
    true
}

fn main() {}

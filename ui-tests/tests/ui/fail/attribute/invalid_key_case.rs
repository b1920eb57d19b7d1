// A key is lowercase dot-separated segments: "Products.Get" is rejected.
use toolwright::tool;

/// Read a product.
#[tool(key = "Products.Get", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {}

// `#[tool]` goes on a fn; on a struct it says so once, on the struct's head.
use toolwright::tool;

/// A product.
#[tool(key = "products.product", effect = read, authorize = public)]
pub struct Product {
    id: u64,
}

fn main() {
    let _ = Product { id: 1 }.id;
}

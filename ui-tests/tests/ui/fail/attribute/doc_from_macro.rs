// A doc attribute whose text comes from a macro cannot be read as the description:
// an error, rather than a description with that part left out.
use toolwright::tool;

/// Look a product up.
#[doc = include_str!("doc_from_macro.md")]
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(id: u64) -> u64 {
    id
}

/// With `description`, the doc attribute is only for rustdoc: no error.
#[tool(key = "products.find", effect = read, authorize = public, description = "Find a product.")]
#[doc = include_str!("doc_from_macro.md")]
async fn find_product(id: u64) -> u64 {
    id
}

fn main() {}

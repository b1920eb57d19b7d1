// Without `name`, the fn's name is the tool's name, held to the same rule:
// ASCII letters, digits, `_` and `-` only. The error is on the fn's name.
use toolwright::tool;

/// The size of a product.
#[tool(key = "products.size", effect = read, authorize = public)]
async fn größe(id: u64) -> u64 {
    id
}

fn main() {}

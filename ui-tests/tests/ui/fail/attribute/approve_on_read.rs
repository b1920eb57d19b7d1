// `approve` is never called for a `read` tool, so declaring it is an error.
use toolwright::{Invocation, tool};

struct Actor;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public, approve = ask)]
async fn get_product(id: u64) -> u64 {
    id
}

async fn ask(_: &Actor, _: &Invocation<'_, GetProductArgs>) -> bool {
    true
}

fn main() {}

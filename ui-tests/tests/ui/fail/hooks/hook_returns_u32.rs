// A hook answers `bool`, `Verdict` or a `Result` of either; `u32` is rejected.
use toolwright::{Invocation, tool};

struct Actor;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = can_read)]
async fn get_product(id: u64) -> u64 {
    id
}

async fn can_read(_: &Actor, _: &Invocation<'_, GetProductArgs>) -> u32 {
    1
}

fn main() {}

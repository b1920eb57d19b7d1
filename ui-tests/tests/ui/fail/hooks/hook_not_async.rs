// A hook is an `async fn`, or a plain `fn` returning `Verdict`; a plain fn returning `bool` is rejected.
use toolwright::{Invocation, tool};

struct Actor;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = can_read)]
async fn get_product(id: u64) -> u64 {
    id
}

fn can_read(_: &Actor, call: &Invocation<'_, GetProductArgs>) -> bool {
    call.id > 0
}

fn main() {}

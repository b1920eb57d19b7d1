// On error the fn and its `...Args` struct are still emitted: only the attribute's own error appears.
use toolwright::{Invocation, tool};

struct Actor;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = can_read, colour = "blue")]
async fn get_product(id: u64) -> u64 {
    id
}

async fn can_read(_: &Actor, call: &Invocation<'_, GetProductArgs>) -> bool {
    call.id > 0
}

fn main() {
    let _ = get_product(7);
    let _ = GetProductArgs { id: 7 };
    let _ = can_read;
}

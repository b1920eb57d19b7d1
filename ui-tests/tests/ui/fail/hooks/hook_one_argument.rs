// A hook takes the caller's context and the invocation; one argument is not enough.
use toolwright::{Invocation, tool};

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = can_read)]
async fn get_product(id: u64) -> u64 {
    id
}

async fn can_read(call: &Invocation<'_, GetProductArgs>) -> bool {
    call.id > 0
}

fn main() {}

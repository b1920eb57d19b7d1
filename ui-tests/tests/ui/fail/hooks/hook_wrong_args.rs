// A hook receives the invocation of its own tool; another tool's args type is rejected.
use toolwright::{Invocation, tool};

struct Actor;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = can_list)]
async fn get_product(id: u64) -> u64 {
    id
}

/// List the products.
#[tool(key = "products.list", effect = read, authorize = can_list)]
async fn list_products(page: u32) -> Vec<u64> {
    vec![u64::from(page)]
}

async fn can_list(_: &Actor, _: &Invocation<'_, ListProductsArgs>) -> bool {
    true
}

fn main() {}

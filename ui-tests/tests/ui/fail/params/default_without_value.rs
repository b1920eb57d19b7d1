use toolwright::tool;

/// List products.
#[tool(key = "products.list", effect = read, authorize = public)]
async fn list_products(#[default] limit: u32) -> u32 {
    limit
}

fn main() {}

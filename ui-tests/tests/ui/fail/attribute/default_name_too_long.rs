// Without `name`, the fn's name is the tool's name, held to the same rule:
// at most 64 characters (67 here). The error is on the fn's name.
use toolwright::tool;

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_the_product_with_this_identifier_from_the_catalog_of_every_shop(id: u64) -> u64 {
    id
}

fn main() {}

// `args = CustomName` names the generated struct.
use toolwright::{Tool, tool};

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public, args = ProductQuery)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {
    let query = ProductQuery { id: 4 };
    assert_eq!(query.id, 4);
    assert_eq!(ProductQuery::NAME, "get_product");
}

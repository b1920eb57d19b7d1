// Doc comments on parameters become the descriptions of their fields.
use toolwright::{Catalog, tool};

/// Read a product.
#[tool(key = "products.get", effect = read, authorize = public)]
async fn get_product(
    /// The product's identifier.
    id: u64,
    /// Whether to include prices.
    with_prices: bool,
) -> u64 {
    if with_prices { id } else { 0 }
}

fn main() {
    let catalog = Catalog::builder()
        .register::<GetProductArgs>()
        .build()
        .unwrap();
    let properties = &catalog.get("get_product").unwrap().input_schema()["properties"];
    assert_eq!(properties["id"]["description"], "The product's identifier.");
    assert_eq!(
        properties["with_prices"]["description"],
        "Whether to include prices."
    );
}

// `name`, `title` and `description` override the fn name and doc comment.
use toolwright::{Catalog, Tool, tool};

/// This doc comment is not the description.
#[tool(
    key = "products.get",
    name = "get-product",
    title = "Get a product",
    description = "Read one product by its identifier.",
    effect = read,
    authorize = public
)]
async fn get_product(id: u64) -> u64 {
    id
}

fn main() {
    assert_eq!(GetProductArgs::NAME, "get-product");
    assert_eq!(GetProductArgs::TITLE, Some("Get a product"));
    assert_eq!(
        GetProductArgs::DESCRIPTION,
        "Read one product by its identifier."
    );
    let catalog = Catalog::builder()
        .register::<GetProductArgs>()
        .build()
        .unwrap();
    let entry = catalog.get("get-product").unwrap();
    assert_eq!(entry.key(), "products.get");
    assert_eq!(entry.title(), Some("Get a product"));
}

// A tool in a nested module registers with its module path and is discovered.
mod shop {
    pub(crate) mod products {
        use toolwright::tool;

        /// Read a product.
        #[tool(key = "shop.products.get", effect = read, authorize = public)]
        pub(crate) async fn get_product(id: u64) -> u64 {
            id
        }
    }
}

use toolwright::{Catalog, Tool};

fn main() {
    let location = <shop::products::GetProductArgs as Tool>::LOCATION;
    assert!(location.module_path.ends_with("shop::products"));
    let catalog = Catalog::discover().unwrap();
    assert!(catalog.get("get_product").is_some());
    let scoped = Catalog::discover_in([location.module_path]).unwrap();
    assert_eq!(scoped.len(), 1);
}

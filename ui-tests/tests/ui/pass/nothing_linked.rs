// A binary with no `#[tool]` linked: `discover` says so and names the
// remedy, and `Catalog::empty` is how to start with none on purpose.
use toolwright::{Catalog, CatalogError};

fn main() {
    let error = Catalog::discover().unwrap_err();
    assert_eq!(error, CatalogError::NothingLinked);
    let message = error.to_string();
    assert!(message.contains("use my_tools as _;"), "{message}");
    assert!(message.contains("Catalog::empty()"), "{message}");
    assert!(Catalog::empty().is_empty());
}

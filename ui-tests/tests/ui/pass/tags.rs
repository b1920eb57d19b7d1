// `tags` are carried, in the order written, into the tool's metadata; `[]` is no tags.
use toolwright::{Catalog, Tool, tool};

/// Look up a customer.
#[tool(
    key = "customers.get",
    effect = read,
    authorize = public,
    tags = ["pii", "crm-v2", "eu_only"]
)]
async fn get_customer(id: u64) -> u64 {
    id
}

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public, tags = [])]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    assert_eq!(GetCustomerArgs::TAGS, ["pii", "crm-v2", "eu_only"]);
    assert!(AddArgs::TAGS.is_empty());
    let catalog = Catalog::builder()
        .register::<GetCustomerArgs>()
        .build()
        .unwrap();
    assert_eq!(
        catalog.get("get_customer").unwrap().tags(),
        ["pii", "crm-v2", "eu_only"]
    );
}

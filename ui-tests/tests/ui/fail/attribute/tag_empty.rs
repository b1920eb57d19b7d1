// An empty tag is rejected on its literal.
use toolwright::tool;

/// Look up a customer.
#[tool(key = "customers.get", effect = read, authorize = public, tags = ["pii", ""])]
async fn get_customer(id: u64) -> u64 {
    id
}

fn main() {}

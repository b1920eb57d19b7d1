// A tag has at most 32 characters; this one has 35.
use toolwright::tool;

/// Look up a customer.
#[tool(
    key = "customers.get",
    effect = read,
    authorize = public,
    tags = ["personally_identifiable_information"]
)]
async fn get_customer(id: u64) -> u64 {
    id
}

fn main() {}

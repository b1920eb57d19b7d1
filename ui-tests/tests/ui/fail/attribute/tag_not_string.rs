// Each tag is a string literal: a bare word and a number are each rejected.
use toolwright::tool;

/// Look up a customer.
#[tool(key = "customers.get", effect = read, authorize = public, tags = [pii, 7, "crm"])]
async fn get_customer(id: u64) -> u64 {
    id
}

fn main() {}

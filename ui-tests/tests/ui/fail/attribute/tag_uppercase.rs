// Tags are lowercase words; "PII" is rejected on the literal, with its fix.
use toolwright::tool;

/// Look up a customer.
#[tool(key = "customers.get", effect = read, authorize = public, tags = ["crm", "PII"])]
async fn get_customer(id: u64) -> u64 {
    id
}

fn main() {}

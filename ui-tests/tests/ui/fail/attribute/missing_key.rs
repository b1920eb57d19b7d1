// `key` is required; the error says how to add one.
use toolwright::tool;

/// Add two numbers.
#[tool(effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

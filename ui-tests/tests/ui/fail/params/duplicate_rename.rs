// Two inputs renamed to one field name are rejected on the second name.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(#[rename = "n"] a: i64, #[rename = "n"] b: i64) -> i64 {
    a + b
}

fn main() {}

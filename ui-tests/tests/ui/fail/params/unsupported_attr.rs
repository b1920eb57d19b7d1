// An attribute the macro does not know is rejected on the attribute.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(#[validate(min = 1)] a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

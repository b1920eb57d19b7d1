// `effect` is required; the error lists the three effects.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

// A tool must be an `async fn`; the error points at `fn` and says to add `async`.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

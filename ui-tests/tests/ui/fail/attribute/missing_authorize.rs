// `authorize` is required; a tool open to everyone says `authorize = public`.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", effect = read)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

// A key given twice is underlined on its second occurrence.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", effect = read, key = "math.sum", authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

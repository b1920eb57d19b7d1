// `#[serde(...)]` on a parameter is rejected; the error names the supported attributes.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(#[serde(rename = "x")] a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

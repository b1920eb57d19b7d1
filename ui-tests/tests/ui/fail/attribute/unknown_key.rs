// An unknown key is underlined with a did-you-mean, and the key it meant is not also reported missing.
use toolwright::tool;

/// Add two numbers.
#[tool(key = "math.add", efect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {}

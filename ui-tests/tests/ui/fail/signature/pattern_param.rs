// A parameter is a plain name (its schema field); a destructuring pattern is rejected.
use toolwright::tool;

/// Add a pair of numbers.
#[tool(key = "math.add_pair", effect = read, authorize = public)]
async fn add_pair((a, b): (u32, u32)) -> u32 {
    a + b
}

fn main() {}

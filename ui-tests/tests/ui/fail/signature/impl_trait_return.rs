// An `impl Trait` return type has no schema; the error points at the return type.
use toolwright::tool;

/// List the numbers below ten.
#[tool(key = "demo.numbers", effect = read, authorize = public)]
async fn numbers() -> impl serde::Serialize {
    vec![1, 2, 3]
}

fn main() {}

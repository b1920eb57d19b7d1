// An `impl Trait` parameter has no schema; the error points at the type.
use toolwright::tool;

/// Greet someone.
#[tool(key = "demo.greet", effect = read, authorize = public)]
async fn greet(name: impl Into<String>) -> String {
    name.into()
}

fn main() {}

// A `&str` input is rejected with "inputs are owned; use String".
use toolwright::tool;

/// Greet someone.
#[tool(key = "demo.greet", effect = read, authorize = public)]
async fn greet(name: &str) -> String {
    format!("hello {name}")
}

fn main() {}

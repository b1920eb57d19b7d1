// Errors are accumulated: a missing key, an unknown key and a borrowed input are all reported.
use toolwright::tool;

/// Greet someone.
#[tool(effect = read, authorize = public, titel = "Greet")]
async fn greet(name: &str) -> String {
    format!("hello {name}")
}

fn main() {}

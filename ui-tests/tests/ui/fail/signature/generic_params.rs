// A tool cannot be generic: its schema is fixed at compile time.
use toolwright::tool;

/// Echo a value.
#[tool(key = "demo.echo", effect = read, authorize = public)]
async fn echo<T: Clone>(value: T) -> T {
    value
}

fn main() {}

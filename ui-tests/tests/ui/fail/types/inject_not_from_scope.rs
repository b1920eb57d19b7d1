// `#[inject]` needs a `FromScope` type; `u32` is rejected on the type.
use toolwright::tool;

/// Read a limit.
#[tool(key = "limits.get", effect = read, authorize = public)]
async fn get_limit(#[inject] limit: u32) -> u32 {
    limit
}

fn main() {}

// A quoted number is refused on the string, with the fix.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = "4")]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

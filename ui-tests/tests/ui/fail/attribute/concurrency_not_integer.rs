// `concurrency` is a whole number; a float is refused on the value.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = 2.5)]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

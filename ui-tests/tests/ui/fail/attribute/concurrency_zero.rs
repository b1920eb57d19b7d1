// `concurrency = 0` would never run the tool: refused on the number.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = 0)]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

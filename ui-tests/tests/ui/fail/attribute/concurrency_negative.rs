// A negative `concurrency` is refused on the whole value.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = -2)]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

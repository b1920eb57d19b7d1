// `exclusive` already runs a tool alone: with `concurrency` it is refused on `exclusive`.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = 2, exclusive)]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

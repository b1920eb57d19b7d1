// `concurrency` given twice is underlined on its second occurrence.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = 2, concurrency = 3)]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

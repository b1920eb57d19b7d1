// `max_result = 0` would show a model nothing: refused on the number.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, max_result = 0)]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

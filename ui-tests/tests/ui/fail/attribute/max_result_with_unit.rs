// `max_result` counts characters; a size with a unit is refused on the string.
use toolwright::tool;

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, max_result = "64KiB")]
async fn render(month: u32) -> u32 {
    month
}

fn main() {}

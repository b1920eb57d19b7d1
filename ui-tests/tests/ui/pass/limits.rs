// `concurrency`, `exclusive` and `max_result` are carried into the tool's metadata.
use std::num::NonZeroU32;

use toolwright::{Tool, tool, executor::Concurrency};

/// Render a report.
#[tool(key = "reports.render", effect = read, authorize = public, concurrency = 4, max_result = 20_000)]
async fn render(month: u32) -> u32 {
    month
}

/// Rebuild the index.
#[tool(key = "index.rebuild", effect = read, authorize = public, exclusive)]
async fn rebuild() -> bool {
    true
}

/// Look up an entry.
#[tool(key = "index.lookup", effect = read, authorize = public, exclusive = false)]
async fn lookup(id: u64) -> u64 {
    id
}

fn main() {
    assert_eq!(RenderArgs::CONCURRENCY, Concurrency::Limit(NonZeroU32::new(4).unwrap()));
    assert_eq!(RenderArgs::MAX_RESULT, Some(20_000));
    assert_eq!(RebuildArgs::CONCURRENCY, Concurrency::Exclusive);
    assert_eq!(RebuildArgs::MAX_RESULT, None);
    assert_eq!(LookupArgs::CONCURRENCY, Concurrency::Unlimited);
}

// An empty `search_hint` gives a search nothing to match: refused on the literal.
use toolwright::tool;

/// Rebuild the search index.
#[tool(key = "ops.reindex", effect = read, authorize = public, defer, search_hint = " ")]
async fn reindex(warehouse: u32) -> u32 {
    warehouse
}

fn main() {}

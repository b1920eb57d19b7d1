//! A registry that imports, renames and drops tools at run time keeps
//! nothing of the tools it dropped: their keys and names go with them.
//!
//! Memory is measured by `allocation-counter`'s global allocator (linked
//! only into this test binary): the bytes the test's thread allocated and
//! has not freed, which a clock or the process's RSS would only blur.

use serde_json::json;
use toolwright::{
    Catalog, Effect,
    registry::{DynamicTool, Registry, Selector},
};

/// How many distinct tools come and go.
const TOOLS: usize = 100_000;

/// What may stay allocated once every tool is gone: a fraction of what
/// 100,000 keys and names kept for good would take (megabytes).
const KEPT_BYTES: i64 = 16 * 1024;

/// Tool `i` of a remote server, built at run time as an import builds it.
fn imported(i: usize) -> DynamicTool {
    DynamicTool::builder(format!("remote.tool_{i}"), format!("tool_{i}"))
        .description("A tool imported from a remote server.")
        .effect(Effect::Read)
        .input_schema(json!({"type": "object"}))
        .handler(|_| Box::pin(async { Ok(json!(null)) }))
        .build()
        .unwrap()
}

/// Each tool of `tools` arrives, is served renamed under a namespace (key
/// `crm.remote.tool_i`, name `crm_tool_i`), then goes away.
fn churn(registry: &Registry, tools: std::ops::Range<usize>) {
    for i in tools {
        let server = Registry::new(Catalog::builder().build().unwrap());
        server.register(imported(i)).unwrap();
        registry.mount("crm", server).unwrap();
        registry.unregister(&Selector::namespace("crm")).unwrap();
    }
}

#[test]
fn tools_registered_and_dropped_leave_memory_flat() {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    // What the first calls set up once (thread-locals, lazily built
    // tables) is not the churn's.
    churn(&registry, 0..100);
    let info = allocation_counter::measure(|| churn(&registry, 100..100 + TOOLS));
    assert!(registry.tools().is_empty());
    println!(
        "{TOOLS} dynamic tools registered, mounted and dropped: {} bytes still allocated ({} allocations)",
        info.bytes_current, info.count_current,
    );
    assert!(
        info.bytes_current <= KEPT_BYTES,
        "{} bytes are still allocated after {TOOLS} tools came and went",
        info.bytes_current,
    );
}

// `defer` and `search_hint` are carried into the tool's metadata; a tool
// that declares neither keeps the trait's defaults.
use toolwright::{Catalog, Tool, tool};

/// Export every order of a month as CSV.
#[tool(
    key = "orders.export",
    effect = read,
    authorize = public,
    defer,
    search_hint = "spreadsheet download report"
)]
async fn export_orders(month: u8) -> String {
    month.to_string()
}

/// Archive a month's orders.
#[tool(key = "orders.archive", effect = read, authorize = public, defer = false)]
async fn archive_orders(month: u8) -> u8 {
    month
}

fn main() {
    assert!(ExportOrdersArgs::DEFER);
    assert_eq!(
        ExportOrdersArgs::SEARCH_HINT,
        Some("spreadsheet download report")
    );
    assert!(!ArchiveOrdersArgs::DEFER);
    assert_eq!(ArchiveOrdersArgs::SEARCH_HINT, None);
    let catalog = Catalog::builder()
        .register::<ExportOrdersArgs>()
        .register::<ArchiveOrdersArgs>()
        .build()
        .unwrap();
    assert!(catalog.get("export_orders").unwrap().deferred());
    assert!(!catalog.get("archive_orders").unwrap().deferred());
}

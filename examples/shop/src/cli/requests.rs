//! `shop requests`: the requests waiting for a manager.

use toolwright::BoxError;
use toolwright::approval::Approval;

use super::open;
use crate::table::{print_table, sorted};

/// Prints the pending requests as a table.
pub(super) async fn print(database: &str) -> Result<(), BoxError> {
    let pending = open(database).await?.approvals.pending().await?;
    print_requests(&pending);
    Ok(())
}

fn print_requests(pending: &[Approval]) {
    if pending.is_empty() {
        println!("no requests wait for approval");
        return;
    }
    let rows: Vec<Vec<String>> = pending
        .iter()
        .map(|a| {
            vec![
                a.id.to_string(),
                a.request.name.clone(),
                sorted(&a.request.arguments).to_string(),
                a.requested_by.clone(),
            ]
        })
        .collect();
    print_table(&["id", "tool", "arguments", "requested by"], &rows);
}

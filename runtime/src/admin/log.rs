//! `api/log`: the execution log from a sequence number on, for a live
//! view that polls with its ETag.

use std::sync::Arc;

use axum::extract::State;
use axum::response::Response;
use http::{HeaderMap, Uri};
use serde_json::{Value, json};

use super::api::{self, Failure};
use super::{Shared, approvals, etag};
use crate::observe::{Event, LogEntry};

/// How many entries a page holds unless `limit` says.
const DEFAULT_LIMIT: usize = 100;
/// The most entries one page holds.
const MAX_LIMIT: usize = 1_000;

/// `GET api/log?since=<seq>&limit=<n>`: `{"entries", "next", "latest",
/// "lost"}`; 404 when the admin has no log.
pub(crate) async fn page(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let Some(log) = &shared.log else {
        return Err(Failure::not_found(
            "this admin has no execution log (see `Admin::log`)",
        ));
    };
    let (since, limit) = api::paging(&uri, "since", DEFAULT_LIMIT, MAX_LIMIT)?;
    // Read before the page: entries appended in between make the next
    // poll's tag differ, never the other way round.
    let latest = log.latest();
    let tag = etag::log(latest, since, limit);
    if etag::unchanged(&headers, &tag) {
        return Ok(api::not_modified(&tag));
    }
    let page = log.since(since, limit);
    let snapshot = shared.executor.registry().snapshot();
    let entries: Vec<Value> = page
        .entries
        .iter()
        .map(|entry| shown(entry, &snapshot))
        .collect();
    let body = json!({
        "entries": entries,
        "next": page.next,
        "latest": latest.max(page.next),
        "lost": page.lost,
    });
    Ok(api::json(&body, Some(&tag)))
}

/// An entry as the admin shows it. Call events hold redacted arguments
/// already; an approval decision's request is masked as `api/approvals`
/// masks it.
fn shown(entry: &LogEntry, snapshot: &crate::registry::Snapshot) -> Value {
    match &*entry.event {
        Event::Approval(approval) => {
            let mut event = approvals::masked(approval, snapshot);
            if let Some(object) = event.as_object_mut() {
                object.insert("event".to_owned(), json!("approval"));
            }
            json!({"seq": entry.seq, "event": event})
        }
        _ => serde_json::to_value(entry).unwrap_or(Value::Null),
    }
}

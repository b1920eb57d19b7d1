//! Entity tags: what each resource's ETag is, `If-None-Match` on reads
//! and the `If-Match` every change requires.
//!
//! The matching is the two short loops below, not the `headers` crate's
//! `IfMatch`/`IfNoneMatch`: the admin would build `headers` with `sha1`,
//! `mime`, `httpdate` and `base64` for them.

use http::header::{IF_MATCH, IF_NONE_MATCH};
use http::{HeaderMap, StatusCode};
use sha2::{Digest as _, Sha256};

use super::api::Failure;
use crate::approval::{ApprovalId, Status};

/// The registry's ETag at `generation`: tools, one tool, the state.
pub(crate) fn registry(generation: u64) -> String {
    format!("\"r{generation}\"")
}

/// The ETag of one approval request where it stands: what a decision on
/// it must name, so that other requests coming and going never make it
/// stale. A request's tool and arguments never change; only its status.
pub(crate) fn approval(id: ApprovalId, status: Status) -> String {
    format!("\"q{id}-{status}\"")
}

/// The ETag of the log page after `since` of at most `limit` entries,
/// when the newest entry is `latest`: a client that keeps one tag across
/// pages never gets a 304 for a page it has not seen.
pub(crate) fn log(latest: u64, since: u64, limit: usize) -> String {
    format!("\"l{latest}-{since}-{limit}\"")
}

/// The ETag of a representation: `prefix` and the start of its SHA-256.
pub(crate) fn of_bytes(prefix: char, bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("\"{prefix}{hex}\"")
}

/// Whether a GET's `If-None-Match` names `current` (answer 304). It
/// compares weakly: `W/"r3"` names `"r3"`.
pub(crate) fn unchanged(headers: &HeaderMap, current: &str) -> bool {
    headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t.strip_prefix("W/").unwrap_or(t) == current)
}

/// A change's precondition: its `If-Match` must name `current` (or be
/// `*`). Missing: 428; naming another: 412.
pub(crate) fn require(headers: &HeaderMap, current: &str) -> Result<(), Failure> {
    if !headers.contains_key(IF_MATCH) {
        return Err(Failure::new(
            StatusCode::PRECONDITION_REQUIRED,
            "a change needs `If-Match` with the ETag of what it changes",
        ));
    }
    // If-Match compares strongly: a weak tag never matches.
    let matched = headers
        .get_all(IF_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t == current);
    if !matched {
        return Err(Failure::new(
            StatusCode::PRECONDITION_FAILED,
            format!(
                "it changed since it was read: the ETag is now {current}; reload and try again"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn with(name: http::HeaderName, value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(name, HeaderValue::from_static(value));
        headers
    }

    #[test]
    fn if_none_match_compares_weakly() {
        assert!(unchanged(&with(IF_NONE_MATCH, "W/\"r3\""), "\"r3\""));
        assert!(unchanged(&with(IF_NONE_MATCH, "\"r1\", \"r3\""), "\"r3\""));
        assert!(!unchanged(&with(IF_NONE_MATCH, "\"r2\""), "\"r3\""));
        assert!(!unchanged(&HeaderMap::new(), "\"r3\""));
    }

    #[test]
    fn if_match_is_required_and_compared_strongly() {
        let status = |h: &HeaderMap| require(h, "\"r3\"").err().map(|f| format!("{f:?}"));
        assert!(status(&HeaderMap::new()).unwrap().contains("428"));
        assert!(status(&with(IF_MATCH, "\"r2\"")).unwrap().contains("412"));
        assert!(status(&with(IF_MATCH, "W/\"r3\"")).unwrap().contains("412"));
        assert_eq!(status(&with(IF_MATCH, "\"r3\"")), None);
        assert_eq!(status(&with(IF_MATCH, "*")), None);
    }
}

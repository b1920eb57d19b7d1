//! What `cargo run -p quickstart` narrates about approvals holds: a write
//! waits for someone other than its requester, runs once, and the ledger
//! keeps how each approved call ended.

use std::process::Command;

fn demo() -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_quickstart"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Asserts that `lines` appear in `text` in this order (others between).
fn assert_in_order(text: &str, lines: &[&str]) {
    let mut rest = text.lines().map(str::trim);
    for line in lines {
        assert!(
            rest.any(|seen| same_line(seen, line)),
            "`{line}` is missing, or out of order, in:\n{text}"
        );
    }
}

/// The same line, a JSON object at its end compared as JSON: its keys come
/// in the order `serde_json` keeps, which another crate in the build can
/// change (its `preserve_order` feature).
fn same_line(seen: &str, expected: &str) -> bool {
    if seen == expected {
        return true;
    }
    match (seen.split_once('{'), expected.split_once('{')) {
        (Some((seen_head, seen_json)), Some((head, json))) if seen_head == head => {
            let parse =
                |text: &str| serde_json::from_str::<serde_json::Value>(&format!("{{{text}"));
            matches!((parse(seen_json), parse(json)), (Ok(a), Ok(b)) if a == b)
        }
        _ => false,
    }
}

#[test]
fn an_approved_write_runs_once_and_only_after_someone_else_approves_it() {
    assert_in_order(
        &demo(),
        &[
            r#"> bob calls add_task {"title":"water the plants"}"#,
            r#"needs approval: request 1 (tasks.add {"title":"water the plants"})"#,
            r#"> bob preflights add_task {"title":"water the plants"}"#,
            r#"needs approval: request 1 (tasks.add {"title":"water the plants"})"#,
            "> bob approves request 1",
            "refused: approval 1 was requested by `bob`, who cannot also decide it",
            "> ada approves request 1",
            "approved",
            r#"> bob calls add_task {"title":"water the plants"}"#,
            "unit of work: commit 1 change(s)",
            r#"ok: {"done":false,"id":1,"title":"water the plants (by bob)"}"#,
            r#"> bob calls add_task {"title":"water the plants"}"#,
            r#"needs approval: request 2 (tasks.add {"title":"water the plants"})"#,
            "> the ledger on request 1",
            "settled (succeeded): asked by bob, decided by ada",
        ],
    );
}

#[test]
fn the_ledger_records_that_an_approved_call_failed() {
    assert_in_order(
        &demo(),
        &[
            r#"needs approval: request 3 (tasks.delete {"id":99})"#,
            "> bob approves request 3",
            "approved",
            "failed: tool `tasks.delete` failed: there is no task 99",
            "> the ledger on request 3",
            "settled (failed): asked by ada, decided by bob",
        ],
    );
}

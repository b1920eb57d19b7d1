//! The gateway example (`examples/gateway`) against the reference servers
//! `@modelcontextprotocol/server-everything` and `server-filesystem`
//! (installed as `import_mcp.rs` installs them): one MCP endpoint serves
//! the application's tools and both upstreams', qualified, behind the
//! gateway's views, policy and approvals; the official Python SDK lists
//! and calls them over Streamable HTTP, and a write it asks for runs once,
//! after another person's approval.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gateway::{Caller, Gateway, Upstreams, gateway};
use serde_json::json;
use toolwright::audit::SqliteAudit;
use toolwright::import::mcp::Allowlist;
use toolwright::mcp::{HttpOptions, allow_anonymous};

mod installs;
mod mcp_client;

/// The gateway over the installed upstreams, serving `files`; or `None`
/// after a one-line message when npm cannot install them here. On CI
/// (`CI=true`) that fails instead.
async fn gateway_or_skip(test: &str, files: &Path) -> Option<Gateway> {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("upstreams");
    let dir = match installs::npm_ci(&source, "node-upstreams", &[]) {
        Ok(dir) => dir,
        Err(why) if !installs::must_run() => {
            eprintln!("skipped {test}: the upstreams are unavailable ({why})");
            return None;
        }
        Err(why) => panic!("{why}"),
    };
    let script = |name: &str| {
        let script = format!("node_modules/@modelcontextprotocol/{name}/dist/index.js");
        dir.join(script).display().to_string()
    };
    std::fs::create_dir_all(files).unwrap();
    let upstreams = Upstreams {
        everything: (
            "node".to_owned(),
            vec![script("server-everything"), "stdio".to_owned()],
        ),
        files: (
            "node".to_owned(),
            vec![script("server-filesystem"), files.display().to_string()],
        ),
    };
    let allowlist = Allowlist::new()
        .command("node", &upstreams.everything.1)
        .command("node", &upstreams.files.1)
        .env(["PATH", "HOME"]);
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
    let audit = SqliteAudit::connect(pool).await.unwrap();
    let keep = std::sync::Arc::new(|_: &str, _: &toolwright::import::mcp::Pins| {});
    Some(
        gateway(&upstreams, &allowlist, BTreeMap::new(), keep, audit)
            .await
            .unwrap(),
    )
}

/// A directory of its own under the target directory.
fn scratch(name: &str) -> PathBuf {
    let dir =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn one_endpoint_serves_local_and_imported_tools_behind_the_gateways_rules() {
    let test = "one_endpoint_serves_local_and_imported_tools_behind_the_gateways_rules";
    let files = scratch("gateway-files");
    let Some(gateway) = gateway_or_skip(test, &files).await else {
        return;
    };
    assert_eq!(gateway.pins["everything"].len(), 3);
    assert_eq!(gateway.pins["files"].len(), 3);
    assert!(gateway.changed.is_empty());
    let server = gateway.server.build();

    let manager = mcp_client::connect(&server, Caller::new("mia", true)).await;
    // The upstreams' tools are deferred: found by a search, per session.
    assert_eq!(
        mcp_client::tool_names(&manager).await,
        ["add_note", "list_notes", "search_tools"]
    );
    let found = mcp_client::call(
        &manager,
        "search_tools",
        json!({"query": "echo a message", "limit": 1}),
    )
    .await;
    assert!(
        mcp_client::text(&found).contains("everything_echo"),
        "{}",
        mcp_client::text(&found)
    );
    assert_eq!(
        mcp_client::tool_names(&manager).await,
        ["everything_echo", "add_note", "list_notes", "search_tools"]
    );
    let echoed = mcp_client::call(&manager, "everything_echo", json!({"message": "hi"})).await;
    assert_eq!(mcp_client::text(&echoed), "Echo: hi");
    // A write of the application's and a destructive tool of the
    // upstream's both wait for another manager.
    for (name, args) in [
        ("add_note", json!({"text": "call the bank"})),
        ("everything_toggle-simulated-logging", json!({})),
    ] {
        let asked = mcp_client::call(&manager, name, args).await;
        assert_eq!(asked.is_error, Some(true), "{name}");
        assert!(
            mcp_client::text(&asked).contains("approval"),
            "{name}: {}",
            mcp_client::text(&asked)
        );
    }
    assert_eq!(gateway.approvals.pending().await.unwrap().len(), 2);

    // Someone else sees and calls only what reads, and finds nothing
    // else: a search stays within the caller's view.
    let guest = mcp_client::connect(&server, Caller::new("gus", false)).await;
    assert_eq!(
        mcp_client::tool_names(&guest).await,
        ["list_notes", "search_tools"]
    );
    let found = mcp_client::call(
        &guest,
        "search_tools",
        json!({"query": "write a file", "limit": 10}),
    )
    .await;
    let found = mcp_client::text(&found);
    assert!(found.contains("files_read_text_file"), "{found}");
    assert!(!found.contains("files_write_file"), "{found}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_calls_both_upstreams_and_a_write_runs_once_after_approval() {
    let test = "the_python_sdk_calls_both_upstreams_and_a_write_runs_once_after_approval";
    let Some(python) = installs::python_or_skip(test) else {
        return;
    };
    let files = scratch("gateway-sdk-files");
    let Some(gateway) = gateway_or_skip(test, &files).await else {
        return;
    };
    std::fs::write(files.join("hello.txt"), "hello").unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    // Every HTTP caller is the manager `mia` here; `max` approves.
    let server = gateway.server.build();
    let caller = allow_anonymous(Caller::new("mia", true));
    tokio::spawn(server.serve_http_on(listener, caller, HttpOptions::default()));

    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python/gateway_client.py");
    let note = files.join("note.txt");
    let mut client = Command::new(python)
        .arg(script)
        .arg(&url)
        .arg(&note)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (mut to_client, stdout) = (client.stdin.take().unwrap(), client.stdout.take().unwrap());
    let approvals = gateway.approvals.clone();
    let lines = tokio::task::spawn_blocking(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            if line == "pending" {
                let approved = tokio::runtime::Handle::current().block_on(async {
                    let pending = approvals.pending().await.unwrap();
                    assert_eq!(pending.len(), 1, "one write waits");
                    assert!(!note.exists(), "written before approval");
                    let id = pending[0].id;
                    approvals
                        .approve(id, &Caller::new("max", true), "fine")
                        .await
                });
                approved.unwrap();
                writeln!(to_client, "approved").unwrap();
            }
            lines.push(line);
        }
        lines
    })
    .await
    .unwrap();
    let status = client.wait().unwrap();
    assert!(status.success(), "{}", lines.join("\n"));
    assert_eq!(
        lines.last().map(String::as_str),
        Some("7 passed, 0 failed"),
        "{lines:?}"
    );
    assert_eq!(
        std::fs::read_to_string(files.join("note.txt")).unwrap(),
        "from python"
    );
}

//! The gateway example (`examples/gateway`) against the reference server
//! `@modelcontextprotocol/server-everything` (installed as `import_mcp.rs`
//! installs it): one MCP endpoint serves the application's tools and the
//! upstream's, qualified, behind the gateway's views, policy and approvals.

use std::path::PathBuf;

use gateway::{Caller, gateway};
use serde_json::json;
use toolwright::audit::SqliteAudit;
use toolwright::import::mcp::{Allowlist, Pins};

mod installs;
mod mcp_client;

#[tokio::test]
async fn one_endpoint_serves_local_and_imported_tools_behind_the_gateways_rules() {
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("upstreams");
    let dir = match installs::npm_ci(&source, "node-upstreams", &[]) {
        Ok(dir) => dir,
        Err(why) if !installs::must_run() => {
            eprintln!("skipped the gateway test: server-everything is unavailable ({why})");
            return;
        }
        Err(why) => panic!("{why}"),
    };
    let script = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let args = vec![script.display().to_string(), "stdio".to_owned()];
    let allowlist = Allowlist::new()
        .command("node", &args)
        .env(["PATH", "HOME"]);
    let pool = sqlx::SqlitePool::connect("sqlite::memory:").await.unwrap();
    let audit = SqliteAudit::connect(pool).await.unwrap();
    let gateway = gateway("node", &args, &allowlist, Pins::new(), audit)
        .await
        .unwrap();
    assert_eq!(gateway.pins.len(), 3);
    assert!(gateway.changed.is_empty());
    let server = gateway.server.build();

    let manager = mcp_client::connect(&server, Caller::new("mia", true)).await;
    assert_eq!(
        mcp_client::tool_names(&manager).await,
        [
            "everything_echo",
            "everything_get-sum",
            "everything_toggle-simulated-logging",
            "add_note",
            "list_notes",
        ]
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

    // Someone else sees and calls only what reads.
    let guest = mcp_client::connect(&server, Caller::new("gus", false)).await;
    assert_eq!(
        mcp_client::tool_names(&guest).await,
        ["everything_echo", "everything_get-sum", "list_notes"]
    );
}

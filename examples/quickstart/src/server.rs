//! The quickstart over MCP: its server, and the endpoint without credentials.

use std::net::SocketAddr;

use toolwright::mcp::{self, HttpOptions, McpServer, McpServerBuilder};
use toolwright::{BoxError, Executor};

use crate::Actor;

/// An MCP server of `executor`'s tools, each actor shown their view. A
/// client that can ask its person (elicitation) approves a write there;
/// any other gets the request back, to decide elsewhere.
pub fn mcp_server(executor: Executor) -> McpServerBuilder<Actor> {
    McpServer::builder(executor, "toolwright-quickstart", env!("CARGO_PKG_VERSION"))
        .instructions(
            "A shared task list. Writes need another person's approval; deleting needs an administrator.",
        )
        .views(|actor: &Actor| actor.view.clone())
        .elicitation(std::time::Duration::from_secs(300))
}

/// Serves `server` at `http://addr/mcp` with no credentials: every caller
/// is `guest`, who cannot delete and whose writes still wait for approval.
pub async fn serve_anonymous(
    server: McpServerBuilder<Actor>,
    addr: SocketAddr,
) -> Result<(), BoxError> {
    // One principal for every caller: its cap on sessions would be
    // everyone's, and clients that never end theirs (HTTP DELETE), such as
    // the TypeScript SDK's, would soon shut the rest out.
    let mut options = HttpOptions::default();
    options.max_sessions_per_principal = options.max_sessions;
    let guest = mcp::allow_anonymous(Actor::new("guest", false));
    Ok(server.build().serve_http(addr, guest, options).await?)
}

//! The peer both comparisons run against: a two-integer `add` written with
//! rmcp 3.11's own `#[tool_router]` / `#[tool]` / `#[tool_handler]` macros,
//! and `add_json`, the same sum as structured content (as toolwright's `add`
//! answers). Included by `dispatch.rs` and `mcp_http.rs` with `#[path]`.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};

/// `add`'s arguments.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct AddRequest {
    a: i64,
    b: i64,
}

/// `add_json`'s result: `{"result": sum}`, toolwright's `structuredContent`
/// for a tool returning an integer.
#[derive(serde::Serialize, schemars::JsonSchema)]
pub(crate) struct Sum {
    result: i64,
}

/// The rmcp server.
#[derive(Clone)]
pub(crate) struct RmcpCalculator {
    pub(crate) tool_router: ToolRouter<Self>,
}

#[tool_router]
impl RmcpCalculator {
    pub(crate) fn new() -> Self {
        RmcpCalculator {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Add two integers.")]
    async fn add(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> String {
        (a + b).to_string()
    }

    #[tool(description = "Add two integers.")]
    async fn add_json(&self, Parameters(AddRequest { a, b }): Parameters<AddRequest>) -> Json<Sum> {
        Json(Sum { result: a + b })
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for RmcpCalculator {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

//! The MCP request a tool is running for, reachable from inside its body:
//! to report progress, send log messages, or ask the client for a sampling
//! or an elicitation while it runs.

use std::future::Future;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken, RequestId};
use rmcp::service::{Peer, RequestContext, ServiceError};

tokio::task_local! {
    static CURRENT: McpCall;
}

/// The MCP `tools/call` request a tool body is running for, when it runs
/// for one on a server built
/// [`mcp_calls`](super::McpServerBuilder::mcp_calls):
/// [`McpCall::current`] inside the body (or anything it awaits in the same
/// task) gives the client's session and the request's progress token. A call through any other front end has none, so a tool that
/// reports progress works everywhere and reports it only where someone
/// listens.
///
/// The [`peer`](Self::peer) is rmcp's: with it a tool sends log messages,
/// or asks the client for a sampling or an elicitation, through rmcp's own
/// API. The client sees those as part of the call.
///
/// ```
/// use toolwright::mcp::McpCall;
/// use toolwright::tool;
///
/// /// Re-index the search engine, reporting progress to MCP clients.
/// #[tool(key = "search.reindex", effect = read, authorize = public)]
/// async fn reindex(batches: u32) -> u32 {
///     let call = McpCall::current();
///     for done in 1..=batches {
///         // ... index one batch ...
///         if let Some(call) = &call {
///             // A client that stopped listening does not stop the work.
///             _ = call.progress(f64::from(done), Some(f64::from(batches)), None).await;
///         }
///     }
///     batches
/// }
///
/// // Outside an MCP request (a direct call, a test), there is none.
/// assert!(McpCall::current().is_none());
/// ```
#[derive(Clone, Debug)]
pub struct McpCall {
    peer: Peer<RoleServer>,
    id: RequestId,
    progress_token: Option<ProgressToken>,
}

impl McpCall {
    /// The MCP request the running tool body is serving, if it is serving
    /// one.
    ///
    /// ```
    /// # use toolwright::mcp::McpCall;
    /// assert!(McpCall::current().is_none());
    /// ```
    pub fn current() -> Option<McpCall> {
        CURRENT.try_with(McpCall::clone).ok()
    }

    /// The client's session, to send it notifications or requests with
    /// rmcp's API.
    ///
    /// ```no_run
    /// # async fn example(call: toolwright::mcp::McpCall) {
    /// let client = call.peer().peer_info();
    /// # let _ = client;
    /// # }
    /// ```
    pub fn peer(&self) -> &Peer<RoleServer> {
        &self.peer
    }

    /// The JSON-RPC id of the `tools/call` request.
    ///
    /// ```no_run
    /// # fn example(call: toolwright::mcp::McpCall) {
    /// println!("serving request {:?}", call.id());
    /// # }
    /// ```
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The progress token the client sent, if it asked for progress.
    ///
    /// ```no_run
    /// # fn example(call: toolwright::mcp::McpCall) {
    /// let wants_progress = call.progress_token().is_some();
    /// # let _ = wants_progress;
    /// # }
    /// ```
    pub fn progress_token(&self) -> Option<&ProgressToken> {
        self.progress_token.as_ref()
    }

    /// Tells the client how far the call has come (`notifications/progress`),
    /// if it asked for progress; otherwise does nothing. `progress` should
    /// grow from one report to the next.
    ///
    /// ```no_run
    /// # async fn example(call: toolwright::mcp::McpCall) {
    /// _ = call.progress(50.0, Some(100.0), Some("half way".into())).await;
    /// # }
    /// ```
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), ServiceError> {
        let Some(token) = &self.progress_token else {
            return Ok(());
        };
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        self.peer.notify_progress(param).await
    }
}

/// Runs `call` (a tool call's future) with `request` as its [`McpCall`].
pub(super) fn serving<F: Future>(
    request: &RequestContext<RoleServer>,
    call: F,
) -> impl Future<Output = F::Output> {
    let current = McpCall {
        peer: request.peer.clone(),
        id: request.id.clone(),
        progress_token: request.meta.get_progress_token(),
    };
    CURRENT.scope(current, call)
}

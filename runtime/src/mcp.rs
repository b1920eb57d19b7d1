//! Serve an [`Executor`] to MCP clients over stdio or Streamable HTTP, with
//! the official Rust SDK [`rmcp`].
//!
//! The adapter is a front end, never a second execution path: `tools/call`
//! goes through [`Executor::invoke`], so authorization, approval, the
//! per-call scope and timeouts are exactly those of a direct call. The
//! caller's context comes from the application (fixed for stdio, derived from
//! the HTTP request for HTTP), never from the client. When the registry
//! changes, each session whose tools changed hears
//! `notifications/tools/list_changed` (see [`McpServer`]).
//!
//! A result's text content is cut past the tool's `max_result` characters
//! (or the executor's [`max_result`](crate::ExecutorBuilder::max_result)),
//! with a marker that says how many more there were. `structuredContent`,
//! sent only for a tool with an output schema, always carries the whole
//! value: MCP requires it to match that schema, which a cut value would not.
//! A client that shows structured content to a model shows it whole, so a
//! tool whose results may be large should bound them itself or declare no
//! output schema.
//!
//! Resources, prompts, completions and logging levels are the
//! application's, served by an rmcp handler of its own beside the tools
//! ([`McpServer::with_companion`]). On a server built
//! [`with_mcp_calls`](McpServer::with_mcp_calls), a tool body reaches the
//! request it serves through [`McpCall::current`]: to report progress, send
//! log messages, or ask the client for a sampling or an elicitation.
//!
//! ```no_run
//! use toolwright::mcp::{bearer_token, HttpOptions, McpServer, Rejection};
//! use toolwright::{tool, Catalog, Container, Executor};
//!
//! /// Add two numbers.
//! #[tool(key = "math.add", effect = read, authorize = public)]
//! async fn add(a: i64, b: i64) -> i64 { a + b }
//!
//! #[derive(Clone)]
//! struct Actor { name: String }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let executor = Executor::new(Catalog::discover()?, Container::default())?;
//! let server = McpServer::<Actor>::new(executor, "calculator", "1.0.0");
//!
//! // stdio: one process, one user.
//! # if false {
//! server.clone().serve_stdio(Actor { name: "local".into() }).await?;
//! # }
//!
//! // Streamable HTTP: the context comes from each request, or the request gets 401.
//! let router = server.http_router(
//!     |parts: &http::request::Parts| match bearer_token(&parts.headers) {
//!         Some("demo") => Ok(Actor { name: "demo".into() }),
//!         _ => Err(Rejection::unauthorized()),
//!     },
//!     HttpOptions::default(),
//! );
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! axum::serve(listener, router).await?;
//! # Ok(())
//! # }
//! ```

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;

use arc_swap::ArcSwapOption;
use rmcp::model::Extensions;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CallToolResponse, CallToolResult,
    CompleteRequestMethod, CompleteRequestParams, CompleteResult, ConstString, ContentBlock,
    CustomRequest, CustomResult, ErrorCode, GetPromptRequestMethod, GetPromptRequestParams,
    GetPromptResponse, Implementation, JsonObject, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
    ListResourcesResult, ListToolsRequestMethod, ListToolsResult, MetaObject,
    PaginatedRequestParams, ReadResourceRequestMethod, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestMethod,
    SubscribeRequestMethod, SubscribeRequestParams, Tool, ToolAnnotations,
    UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
// Logging levels are deprecated by SEP-2577, and still what clients send.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::catalog::{Catalog, OutputShape, ToolEntry};
use crate::effect::Effect;
use crate::error::CallError;
use crate::executor::Executor;
use crate::registry::View;
use crate::request::ApprovalRequest;
use crate::util::excerpt::{Excerpt, QUOTED_CHARS, result_text};

mod auth;
mod call;
mod companion;
mod elicit;
mod http_body;
mod http_server;
mod http_sessions;
mod jsonrpc;
#[cfg(feature = "oauth")]
mod jwt;
mod listener;
mod sessions;
mod stdio;
pub use auth::{
    Anonymous, Authenticate, Rejection, ResourceMetadata, allow_anonymous, bearer_token,
};
pub use call::McpCall;
use companion::Companion;
use elicit::Elicitation;
use http_server::CallerContext;
pub use http_server::{DEFAULT_HTTP_ADDR, HttpOptions};
#[cfg(feature = "oauth")]
pub use jwt::{Claims, JwtAuth};
use sessions::Sessions;
pub use stdio::StdioOptions;

pub use axum;
pub use http;
#[cfg(feature = "oauth")]
pub use jsonwebtoken;
pub use rmcp;

/// The `_meta` key under which a `tools/call` result that waits for
/// approval carries its [`ApprovalRequest`].
///
/// Such a result is an `isError` result whose text tells the model to wait;
/// the request itself (tool key, name, validated arguments, digest) is for
/// the client application, which can show it to a person. It is not in
/// `structuredContent`: MCP clients check that against the tool's output
/// schema, and the official TypeScript SDK does so for error results too.
/// [`approval_request`] reads it back.
///
/// ```
/// assert_eq!(toolwright::mcp::APPROVAL_REQUIRED, "toolwright/approvalRequired");
/// ```
pub const APPROVAL_REQUIRED: &str = "toolwright/approvalRequired";

/// The [`ApprovalRequest`] a `tools/call` result carries when the call waits
/// for approval (under [`APPROVAL_REQUIRED`] in its `_meta`), or `None` for
/// any other result. A value under that key that is not an approval request
/// (from a server of another version, say) is the error that says why.
///
/// For an application that drives a toolwright server with rmcp's client:
/// show the request to a person, record their approval of its digest, then
/// send the same call again.
///
/// ```
/// use serde_json::json;
/// use toolwright::Digest;
/// use toolwright::mcp::approval_request;
/// use toolwright::mcp::rmcp::model::CallToolResult;
///
/// let arguments = json!({"id": 7});
/// let digest = Digest::of("tasks.delete", &arguments);
/// // A result as a client receives it from the server.
/// let result: CallToolResult = serde_json::from_value(json!({
///     "content": [{"type": "text", "text": "This call needs a person's approval."}],
///     "isError": true,
///     "_meta": {"toolwright/approvalRequired": {
///         "key": "tasks.delete",
///         "name": "delete_task",
///         "arguments": arguments,
///         "digest": digest,
///     }},
/// }))
/// .unwrap();
///
/// let request = approval_request(&result).unwrap().expect("the call waits for approval");
/// assert_eq!(request.name, "delete_task");
/// assert_eq!(request.digest, digest);
///
/// let done = CallToolResult::success(Vec::new());
/// assert!(approval_request(&done).unwrap().is_none());
///
/// let mut garbled = result.clone();
/// garbled.meta.as_mut().unwrap().insert("toolwright/approvalRequired".into(), json!({"key": 1}));
/// assert!(approval_request(&garbled).is_err());
/// ```
pub fn approval_request(
    result: &CallToolResult,
) -> Result<Option<ApprovalRequest>, serde_json::Error> {
    let Some(request) = result
        .meta
        .as_ref()
        .and_then(|meta| meta.get(APPROVAL_REQUIRED))
    else {
        return Ok(None);
    };
    ApprovalRequest::deserialize(request).map(Some)
}

type Views<C> = Arc<dyn Fn(&C) -> View + Send + Sync>;

/// An MCP server over an [`Executor`], for callers whose context is `C`.
///
/// Cheap to clone. It serves the executor's registry as it is at each
/// request: a tool disabled there is no longer listed, and a call to it is
/// answered as unavailable.
///
/// It declares the `tools.listChanged` capability and tells each session
/// (stdio, a [`handler`](Self::handler) on any stream, Streamable HTTP with
/// sessions) `notifications/tools/list_changed` when the tools its caller
/// sees change: a change that leaves a session's list as it was sends it
/// nothing, and changes a few milliseconds apart are announced once. A
/// session is followed from the client's `notifications/initialized` until
/// its transport closes. One task per server does this, started by the
/// first session and ended when the server and its sessions are gone;
/// `tools/call` pays nothing for it. Stateless HTTP
/// ([`HttpOptions::stateless`]) has no sessions to tell: it declares no
/// `listChanged` and sends none.
///
/// ```
/// use toolwright::mcp::McpServer;
/// use toolwright::{tool, Catalog, Container, Effect, Executor, Selector, View};
///
/// /// Read the weather.
/// #[tool(key = "weather.read", effect = read, authorize = public)]
/// async fn weather(city: String) -> String { format!("sunny in {city}") }
///
/// #[derive(Clone)]
/// struct Actor { guest: bool }
///
/// let catalog = Catalog::builder().register::<WeatherArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// // Views are built once and chosen per caller.
/// let guests = View::new(Selector::effect(Effect::Read));
/// let staff = View::new(Selector::All);
/// let server = McpServer::<Actor>::new(executor, "weather", "1.0.0")
///     .with_instructions("Ask about the weather.")
///     .with_views(move |actor| if actor.guest { guests.clone() } else { staff.clone() });
/// // Any rmcp transport can serve a handler; `serve_stdio` and
/// // `http_router` are the usual two.
/// let _handler = server.handler(Actor { guest: true });
/// ```
pub struct McpServer<C> {
    shared: Arc<Shared<C>>,
}

impl<C> Clone for McpServer<C> {
    fn clone(&self) -> Self {
        McpServer {
            shared: self.shared.clone(),
        }
    }
}

struct Shared<C> {
    executor: Executor,
    implementation: Implementation,
    instructions: Option<String>,
    /// The registry's tools as MCP describes them, for the catalog they
    /// were built from; rebuilt only when the registry serves another one.
    described: ArcSwapOption<Described>,
    views: Option<Views<C>>,
    /// The sessions told when the tools they see change.
    sessions: Sessions<C>,
    /// Asks the person in the host to approve calls that wait for it.
    elicitation: Option<Elicitation<C>>,
    /// Whether tool bodies reach their request through `McpCall::current`.
    mcp_calls: bool,
    /// Answers what is not about tools: resources, prompts, completions,
    /// logging levels.
    companion: Option<Arc<dyn Companion>>,
}

/// Every tool of one catalog as MCP describes it, in catalog order.
struct Described {
    catalog: Catalog,
    tools: Vec<Tool>,
}

impl<C> Shared<C> {
    /// The executor narrowed to the caller's view, if the server has views.
    fn executor_for(&self, ctx: &C) -> Cow<'_, Executor> {
        match &self.views {
            Some(view_of) => Cow::Owned(self.executor.view(view_of(ctx))),
            None => Cow::Borrowed(&self.executor),
        }
    }

    /// The MCP descriptions of the tools of `catalog`.
    fn described(&self, catalog: &Catalog) -> Arc<Described> {
        if let Some(described) = self.described.load_full()
            && described.catalog.same_as(catalog)
        {
            return described;
        }
        let described = Arc::new(Described {
            catalog: catalog.clone(),
            tools: catalog.iter().map(describe).collect(),
        });
        self.described.store(Some(described.clone()));
        described
    }
}

impl<C: Any + Send + Sync> McpServer<C> {
    /// A server named `name` at `version`, serving every tool of `executor`.
    pub fn new(executor: Executor, name: impl Into<String>, version: impl Into<String>) -> Self {
        McpServer {
            shared: Arc::new(Shared {
                executor,
                implementation: Implementation::new(name.into(), version.into()),
                instructions: None,
                described: ArcSwapOption::empty(),
                views: None,
                sessions: Sessions::new(),
                elicitation: None,
                mcp_calls: false,
                companion: None,
            }),
        }
    }

    /// Instructions the client may show the model.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.shared_mut().instructions = Some(instructions.into());
        self
    }

    /// Serves each caller the view `view_of` picks for their context: the
    /// same view lists and calls, and a tool outside it is answered as if it
    /// did not exist. Narrows the executor's own view, if it has one.
    ///
    /// Called for every request: build the views once and return clones
    /// (an `Arc` each), as the example on [`McpServer`] does. A view decides
    /// what a caller sees; each tool's `authorize` hook still decides what
    /// the caller may do.
    pub fn with_views(mut self, view_of: impl Fn(&C) -> View + Send + Sync + 'static) -> Self {
        self.shared_mut().views = Some(Arc::new(view_of));
        self
    }

    /// A call that waits for approval asks the person in the MCP client
    /// through `elicitation/create`, when the client declares the
    /// capability: they see the tool, its arguments and the digest. Their
    /// answer is recorded in the executor's [`Approvals`](crate::Approvals)
    /// as the caller's decision, and the call then runs (approved) or is
    /// refused (declined), through the pipeline again. Dismissed, timed
    /// out after `timeout`, or asked of a client without the capability,
    /// the call keeps waiting as before: an `isError` result with the
    /// request under [`APPROVAL_REQUIRED`] in its `_meta`.
    ///
    /// The person answering is the caller, so the approvals must let a
    /// requester decide their own requests
    /// ([`allow_self_approval`](crate::approval::ApprovalsBuilder::allow_self_approval));
    /// under four eyes the server does not ask, and another person
    /// decides through the ledger.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::approval::MemoryLedger;
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Approvals, Catalog, Container, Executor, Principal};
    ///
    /// struct User(String);
    /// impl Principal for User {
    ///     fn id(&self) -> &str { &self.0 }
    /// }
    ///
    /// let approvals = Approvals::builder(MemoryLedger::new()).allow_self_approval().build();
    /// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
    ///     .approvals(approvals)
    ///     .build()
    ///     .unwrap();
    /// let server = McpServer::<User>::new(executor, "notes", "1.0.0")
    ///     .with_elicitation(Duration::from_secs(300));
    /// # let _ = server;
    /// ```
    pub fn with_elicitation(mut self, timeout: std::time::Duration) -> Self
    where
        C: crate::Principal,
    {
        self.shared_mut().elicitation = Some(Elicitation::new(timeout));
        self
    }

    /// Serves MCP's other capabilities (resources, prompts, completions,
    /// logging levels) with `handler`, an rmcp [`ServerHandler`] of the
    /// application's, beside the tools: `initialize` declares what
    /// `handler` declares besides tools, and requests about them go to it
    /// with their [`RequestContext`] (the peer, for notifications such as
    /// `notifications/resources/updated`). Tools stay toolwright's: the
    /// companion's tools, if any, are never listed or called.
    ///
    /// Over HTTP, its requests come through the same authentication as
    /// tool calls. Without a companion, those methods answer -32601
    /// (method not found).
    ///
    /// ```
    /// use rmcp::model::{
    ///     ListResourcesResult, PaginatedRequestParams, Resource, ServerCapabilities, ServerConfig,
    /// };
    /// use rmcp::service::RequestContext;
    /// use rmcp::{ErrorData, RoleServer, ServerHandler};
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// /// The application's documents, as MCP resources.
    /// struct Documents;
    ///
    /// impl ServerHandler for Documents {
    ///     fn get_info(&self) -> ServerConfig {
    ///         ServerConfig::new(ServerCapabilities::builder().enable_resources().build())
    ///     }
    ///
    ///     async fn list_resources(
    ///         &self,
    ///         _: Option<PaginatedRequestParams>,
    ///         _: RequestContext<RoleServer>,
    ///     ) -> Result<ListResourcesResult, ErrorData> {
    ///         let handbook = Resource::new("docs://handbook", "handbook");
    ///         Ok(ListResourcesResult::with_all_items(vec![handbook]))
    ///     }
    /// }
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let server = McpServer::<()>::new(executor, "docs", "0.1.0").with_companion(Documents);
    /// let info = ServerHandler::get_info(&server.handler(()));
    /// assert!(info.capabilities.resources.is_some());
    /// assert!(info.capabilities.tools.is_some());
    /// ```
    pub fn with_companion(mut self, handler: impl ServerHandler) -> Self {
        self.shared_mut().companion = Some(Arc::new(handler));
        self
    }

    /// Lets tool bodies reach the MCP request they serve through
    /// [`McpCall::current`]: to report progress, send log messages, or ask
    /// the client for a sampling or an elicitation. Off by default: it
    /// costs every call (a task-local set around it, and the call's future
    /// boxed), and most tools need none of it.
    ///
    /// ```
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let server = McpServer::<()>::new(executor, "indexer", "0.1.0").with_mcp_calls();
    /// # let _ = server;
    /// ```
    pub fn with_mcp_calls(mut self) -> Self {
        self.shared_mut().mcp_calls = true;
        self
    }

    /// How many sessions hear of tool list changes now: initialized, and
    /// not yet closed.
    ///
    /// ```
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let server = McpServer::<()>::new(executor, "demo", "0.1.0");
    /// // No client has connected yet.
    /// assert_eq!(server.sessions(), 0);
    /// ```
    pub fn sessions(&self) -> usize {
        self.shared.sessions.count()
    }

    fn shared_mut(&mut self) -> &mut Shared<C> {
        Arc::get_mut(&mut self.shared).expect("configure the server before cloning it")
    }

    /// The [`rmcp::ServerHandler`] serving every request with `ctx`, for any
    /// rmcp transport.
    pub fn handler(&self, ctx: C) -> McpHandler<C> {
        McpHandler {
            shared: self.shared.clone(),
            context: Some(Arc::new(ctx)),
            sessions: true,
        }
    }
}

/// The server stopped with an error.
///
/// ```
/// use std::net::SocketAddr;
/// use toolwright::mcp::{HttpOptions, McpServer, Rejection};
/// use toolwright::{Catalog, Container, Executor};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
/// let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
/// let addr: SocketAddr = taken.local_addr().unwrap();
/// // The port is in use: serving fails with a message naming it.
/// let error = McpServer::<()>::new(executor, "demo", "0.1.0")
///     .serve_http(addr, |_: &http::request::Parts| Err(Rejection::unauthorized()), HttpOptions::default())
///     .await
///     .unwrap_err();
/// assert!(error.to_string().contains(&addr.to_string()));
/// // The operating system's error is kept as the source.
/// let source = std::error::Error::source(&error).unwrap();
/// let io = source.downcast_ref::<std::io::Error>().unwrap();
/// assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse);
/// # }
/// ```
#[derive(Debug, thiserror::Error)]
#[error("MCP server: {what}")]
pub struct ServeError {
    what: String,
    /// What rmcp, axum or the operating system reported.
    #[source]
    source: crate::error::BoxError,
}

impl ServeError {
    fn new(what: impl Into<String>, source: impl Into<crate::error::BoxError>) -> Self {
        ServeError {
            what: what.into(),
            source: source.into(),
        }
    }
}

/// The [`rmcp::ServerHandler`] of an [`McpServer`].
///
/// Serve it on any rmcp transport, here an in-process stream:
///
/// ```no_run
/// use toolwright::mcp::rmcp::ServiceExt;
/// use toolwright::mcp::McpServer;
/// use toolwright::{Catalog, Container, Executor};
///
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// let executor = Executor::new(Catalog::builder().build()?, Container::default())?;
/// let (server_side, _client_side) = tokio::io::duplex(64 * 1024);
/// let running = McpServer::<()>::new(executor, "demo", "0.1.0")
///     .handler(())
///     .serve(server_side)
///     .await?;
/// running.waiting().await?;
/// # Ok(())
/// # }
/// ```
pub struct McpHandler<C> {
    shared: Arc<Shared<C>>,
    /// Fixed (stdio and other streams), or `None` to read it from the HTTP request.
    context: Option<Arc<C>>,
    /// Whether its sessions outlive a request, and so can hear of changes
    /// (not in stateless HTTP).
    sessions: bool,
}

impl<C> Clone for McpHandler<C> {
    fn clone(&self) -> Self {
        McpHandler {
            shared: self.shared.clone(),
            context: self.context.clone(),
            sessions: self.sessions,
        }
    }
}

impl<C> fmt::Debug for McpHandler<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpHandler")
            .field("server", &self.shared.implementation.name)
            .field("registry", self.shared.executor.registry())
            .finish_non_exhaustive()
    }
}

impl<C: Any + Send + Sync> McpHandler<C> {
    /// The caller's context, borrowed for the request.
    fn caller<'a>(&'a self, request: &'a RequestContext<RoleServer>) -> Result<&'a C, ErrorData> {
        self.caller_in(&request.extensions)
            .map(|ctx| &**ctx)
            // Unreachable behind `http_router`, which authenticates first.
            .ok_or_else(|| ErrorData::invalid_request("no caller context for this request", None))
    }

    /// The fixed context, or the one authentication put in the HTTP
    /// request that `extensions` came with.
    fn caller_in<'a>(&'a self, extensions: &'a Extensions) -> Option<&'a Arc<C>> {
        if let Some(ctx) = &self.context {
            return Some(ctx);
        }
        extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<CallerContext<C>>())
            .map(|c| &c.0)
    }

    /// The executor narrowed to the caller's view, if the server has views.
    fn executor_for(&self, ctx: &C) -> Cow<'_, Executor> {
        self.shared.executor_for(ctx)
    }
}

impl<C: Any + Send + Sync> ServerHandler for McpHandler<C> {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder().enable_tools();
        let mut capabilities = if self.sessions {
            capabilities.enable_tool_list_changed().build()
        } else {
            capabilities.build()
        };
        if let Some(companion) = &self.shared.companion {
            capabilities = companion::merged(capabilities, companion.capabilities());
        }
        let mut config =
            ServerConfig::new(capabilities).with_server_info(self.shared.implementation.clone());
        if let Some(instructions) = &self.shared.instructions {
            config = config.with_instructions(instructions.clone());
        }
        config
    }

    /// From now on the session hears `notifications/tools/list_changed`
    /// when the tools its caller sees change.
    async fn on_initialized(&self, notification: NotificationContext<RoleServer>) {
        if !self.sessions {
            return;
        }
        if let Some(caller) = self.caller_in(&notification.extensions) {
            Sessions::track(&self.shared, notification.peer, caller.clone());
        }
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        Err(unreadable(&request))
    }

    async fn list_resources(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.list_resources(params, request).await,
            None => Err(ErrorData::method_not_found::<ListResourcesRequestMethod>()),
        }
    }

    async fn list_resource_templates(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.list_resource_templates(params, request).await,
            None => Err(ErrorData::method_not_found::<
                ListResourceTemplatesRequestMethod,
            >()),
        }
    }

    async fn read_resource(
        &self,
        params: ReadResourceRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.read_resource(params, request).await,
            None => Err(ErrorData::method_not_found::<ReadResourceRequestMethod>()),
        }
    }

    #[allow(deprecated)] // still what clients before 2026-07-28 send
    async fn subscribe(
        &self,
        params: SubscribeRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.subscribe(params, request).await,
            None => Err(ErrorData::method_not_found::<SubscribeRequestMethod>()),
        }
    }

    #[allow(deprecated)] // still what clients before 2026-07-28 send
    async fn unsubscribe(
        &self,
        params: UnsubscribeRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.unsubscribe(params, request).await,
            None => Err(ErrorData::method_not_found::<UnsubscribeRequestMethod>()),
        }
    }

    async fn list_prompts(
        &self,
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.list_prompts(params, request).await,
            None => Err(ErrorData::method_not_found::<ListPromptsRequestMethod>()),
        }
    }

    async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.get_prompt(params, request).await,
            None => Err(ErrorData::method_not_found::<GetPromptRequestMethod>()),
        }
    }

    async fn complete(
        &self,
        params: CompleteRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.complete(params, request).await,
            None => Err(ErrorData::method_not_found::<CompleteRequestMethod>()),
        }
    }

    #[allow(deprecated)] // SEP-2577; still what clients send
    async fn set_level(
        &self,
        params: SetLevelRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        match &self.shared.companion {
            Some(companion) => companion.set_level(params, request).await,
            None => Err(ErrorData::method_not_found::<SetLevelRequestMethod>()),
        }
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = self.caller(&request)?;
        let tools = self.executor_for(ctx).tools();
        let described = self.shared.described(tools.catalog());
        let listed = tools
            .indexed()
            .map(|(index, _)| described.tools[index].clone())
            .collect();
        Ok(ListToolsResult::with_all_items(listed))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let tools = self.shared.executor.tools();
        // By name, in O(1); a disabled tool is not served.
        let index = tools
            .index_of(name)
            .filter(|&index| tools.snapshot.disabled[index].is_none())?;
        Some(self.shared.described(tools.catalog()).tools[index].clone())
    }

    async fn call_tool(
        &self,
        call: CallToolRequestParams,
        request: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let ctx = self.caller(&request)?;
        let name = call.name.as_ref();
        let executor = self.executor_for(ctx);
        let found = match executor.find_call(name, ctx) {
            Ok(found) => found,
            Err(CallError::UnknownTool { .. }) => {
                // The name is the client's, of any length: quoted up to a prefix.
                let name = Excerpt::prefix(name, QUOTED_CHARS).to_string();
                return Err(ErrorData::invalid_params(
                    format!("unknown tool `{name}`"),
                    Some(json!({ "tool": name })),
                ));
            }
            // Disabled: the model is told the tool is unavailable.
            Err(refused) => {
                let max_result = executor.max_result(None);
                return Ok(tool_result(OutputShape::Unknown, max_result, Err(refused)).into());
            }
        };
        let shape = found.tool().output_shape();
        let max_result = executor.max_result(Some(found.tool()));
        let arguments = Value::Object(call.arguments.unwrap_or_default());
        // A request shows `#[secret]` values masked: asking a person about
        // it, the call keeps its own to run again with.
        let kept = (self.shared.elicitation.is_some()
            && !found.tool().validation().secrets().is_empty())
        .then(|| arguments.clone());
        let result = match self.shared.mcp_calls {
            // The body can reach this request through `McpCall::current`.
            // Boxed: only such servers' calls carry the task-local's space.
            true => {
                let invoke = call::serving(&request, executor.invoke_found(found, arguments, ctx));
                until_cancelled(Box::pin(invoke), &request).await
            }
            false => {
                until_cancelled(pin!(executor.invoke_found(found, arguments, ctx)), &request).await
            }
        };
        let Some(result) = result else {
            return Err(ErrorData::internal_error("the call was cancelled", None));
        };
        let result = match &self.shared.elicitation {
            Some(elicitation) if matches!(result, Err(CallError::ApprovalRequired(_))) => {
                // Boxed: asking a person is rare, and every call's future
                // would otherwise carry its space.
                let decide = elicitation.decide(&executor, result, kept, ctx, &request);
                let decided = match self.shared.mcp_calls {
                    true => call::serving(&request, decide).await,
                    false => decide.await,
                };
                decided.ok_or_else(|| ErrorData::internal_error("the call was cancelled", None))?
            }
            _ => result,
        };
        Ok(tool_result(shape, max_result, result).into())
    }
}

/// `call`'s output, or `None` if the client cancels `request` first.
/// Dropping the call on cancellation (here if boxed, else when the caller
/// returns) hands its finalizers to the runtime with `Outcome::Cancelled`.
/// The call is polled first: one that finishes at once never waits on the
/// token, nor registers with it (which costs as much as a small call's
/// answer).
///
/// `call` comes pinned (boxed, or in the caller's future): a tool call's
/// future moved in by value would be copied again on every call.
async fn until_cancelled<F: Future + Unpin>(
    mut call: F,
    request: &RequestContext<RoleServer>,
) -> Option<F::Output> {
    let mut cancelled = pin!(None);
    poll_fn(|cx| {
        if let Poll::Ready(output) = Pin::new(&mut call).poll(cx) {
            return Poll::Ready(Some(output));
        }
        if cancelled.is_none() {
            cancelled.set(Some(request.ct.cancelled()));
        }
        match cancelled.as_mut().as_pin_mut().map(|token| token.poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    })
    .await
}

/// The answer to a request that rmcp read as no method it knows.
///
/// rmcp reads a request whose params do not fit its method (a `tools/call`
/// without a `name`, say) as a custom request, which its default handler
/// answers -32601 "method not found", echoing the method. The methods this
/// server serves get -32602 "invalid params" instead, as JSON-RPC says, and
/// any other method its name cut to a prefix.
fn unreadable(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    let why = match method {
        CallToolRequestMethod::VALUE => request.params_as::<CallToolRequestParams>().err(),
        ListToolsRequestMethod::VALUE => request.params_as::<PaginatedRequestParams>().err(),
        _ => {
            let method = Excerpt::prefix(method, QUOTED_CHARS).to_string();
            return ErrorData::new(ErrorCode::METHOD_NOT_FOUND, method, None);
        }
    };
    let message = match (why, &request.params) {
        (Some(error), _) => format!("invalid params for `{method}`: {error}"),
        (None, None) => format!("`{method}` needs params"),
        (None, Some(_)) => format!("invalid params for `{method}`"),
    };
    // serde's message may quote the offending value.
    ErrorData::invalid_params(Excerpt::message(&message).to_string(), None)
}

/// A tool as MCP lists it.
fn describe(entry: &ToolEntry) -> Tool {
    let mut tool = Tool::new(
        entry.name(),
        entry.description().to_owned(),
        Arc::new(as_object(entry.input_schema())),
    )
    .with_annotations(annotations(entry));
    if let Some(title) = entry.title() {
        tool = tool.with_title(title.to_owned());
    }
    if let Some(schema) = output_schema(entry) {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    tool
}

fn annotations(entry: &ToolEntry) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::new()
        .read_only(entry.effect() == Effect::Read)
        .idempotent(entry.idempotent())
        .open_world(entry.open_world());
    if entry.effect() != Effect::Read {
        annotations = annotations.destructive(entry.effect() == Effect::Destructive);
    }
    if let Some(title) = entry.title() {
        annotations.title = Some(title.to_owned());
    }
    annotations
}

fn as_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => {
            let mut map = map.clone();
            map.remove("$schema");
            map
        }
        // Catalog schemas are always objects; an empty one accepts anything.
        _ => JsonObject::new(),
    }
}

/// MCP output schemas describe an object; any other result is wrapped as
/// `{"result": ...}`, in the schema and in `structuredContent` alike.
/// Content blocks are not structured content, which an output schema
/// would describe.
fn output_schema(entry: &ToolEntry) -> Option<JsonObject> {
    let shape = entry.output_shape();
    let mut schema = match shape {
        OutputShape::Unknown | OutputShape::Contents => return None,
        OutputShape::Object | OutputShape::Other => as_object(entry.output_schema()?),
    };
    if shape == OutputShape::Other {
        let mut wrapped = JsonObject::new();
        let defs = schema.remove("$defs");
        schema.remove("title");
        wrapped.insert("type".into(), json!("object"));
        wrapped.insert("properties".into(), json!({ "result": schema }));
        wrapped.insert("required".into(), json!(["result"]));
        if let Some(defs) = defs {
            wrapped.insert("$defs".into(), defs);
        }
        Some(wrapped)
    } else {
        schema.remove("title");
        Some(schema)
    }
}

/// The answer to a `tools/call`: the result's text, cut past `max_result`
/// characters (see [`ExecutorBuilder::max_result`](crate::ExecutorBuilder::max_result)),
/// and for a tool with an output schema the whole value as
/// `structuredContent` (an object as it is, any other value as
/// `{"result": value}`): MCP requires it to match that schema, which a cut
/// value would not. A [`Contents`](crate::Contents) result's blocks are
/// its content, as they are.
fn tool_result(
    shape: OutputShape,
    max_result: usize,
    result: Result<Value, CallError>,
) -> CallToolResult {
    match result {
        Ok(value) if shape == OutputShape::Contents => {
            match serde_json::from_value::<Vec<ContentBlock>>(value) {
                Ok(blocks) => CallToolResult::success(blocks),
                Err(error) => {
                    tracing::error!(%error, "a tool's content blocks are not MCP's");
                    CallToolResult::error(vec![ContentBlock::text("The tool failed.")])
                }
            }
        }
        Ok(value) => {
            let (text, _) = result_text(&value, max_result);
            let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
            result.structured_content = match shape {
                OutputShape::Unknown | OutputShape::Contents => None,
                OutputShape::Object => Some(value),
                // Moved in: `json!` would serialize the value again.
                OutputShape::Other => {
                    let mut wrapped = JsonObject::new();
                    wrapped.insert("result".into(), value);
                    Some(Value::Object(wrapped))
                }
            };
            result
        }
        Err(CallError::ApprovalRequired(request)) => {
            let message = CallError::ApprovalRequired(request.clone()).model_message();
            let mut result = CallToolResult::error(vec![ContentBlock::text(message)]);
            // Not in `structuredContent`: clients check that against the
            // tool's output schema, error results included.
            let mut meta = JsonObject::new();
            meta.insert(APPROVAL_REQUIRED.into(), json!(*request));
            result.meta = Some(MetaObject(meta));
            result
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(error.model_message())]),
    }
}

//! How a server answers each request: with the caller's context (fixed,
//! or from the HTTP request), tools through the executor, and the rest
//! through the companion handler.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CallToolResponse, CompleteRequestMethod,
    CompleteRequestParams, CompleteResult, ConstString, CustomRequest, CustomResult, ErrorCode,
    Extensions, GetPromptRequestMethod, GetPromptRequestParams, GetPromptResponse,
    ListPromptsRequestMethod, ListPromptsResult, ListResourceTemplatesRequestMethod,
    ListResourceTemplatesResult, ListResourcesRequestMethod, ListResourcesResult,
    ListToolsRequestMethod, ListToolsResult, PaginatedRequestParams, ReadResourceRequestMethod,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SetLevelRequestMethod, SubscribeRequestMethod, SubscribeRequestParams, SubscriptionFilter,
    Tool, UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
// Logging levels are deprecated by SEP-2577, and still what clients send.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::list_changed::{self, Listener, Sessions};
use super::result::tool_result;
use super::search::{self, Found};
use super::server::Shared;
use super::streamable_http::CallerContext;
use super::{call, companion};
use crate::catalog::{OutputShape, ToolEntry};
use crate::error::CallError;
use crate::executor::Executor;
use crate::util::excerpt::{Excerpt, QUOTED_CHARS};

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
///
/// [`McpServer`]: super::McpServer
pub struct McpHandler<C> {
    pub(super) shared: Arc<Shared<C>>,
    /// Fixed (stdio and other streams), or `None` to read it from the HTTP request.
    pub(super) context: Option<Arc<C>>,
    /// Whether its sessions outlive a request, and so can hear of changes
    /// (not in stateless HTTP).
    pub(super) sessions: bool,
    /// The deferred tools this session found with `search_tools`.
    pub(super) found: Arc<Found>,
}

impl<C> Clone for McpHandler<C> {
    fn clone(&self) -> Self {
        McpHandler {
            shared: self.shared.clone(),
            context: self.context.clone(),
            sessions: self.sessions,
            found: self.found.clone(),
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
        // Declared in stateless HTTP too: a 2026-07-28 client hears of
        // changes on its `subscriptions/listen` request, which needs no
        // session (rmcp acknowledges only what is declared here). An older
        // client of a stateless server has no stream to hear them on.
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
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
            Sessions::track(
                &self.shared,
                Listener::Peer(notification.peer),
                caller.clone(),
                self.found.clone(),
            );
        }
    }

    /// A 2026-07-28 client hears of tool list changes on a
    /// `subscriptions/listen` request, stateless HTTP included: that
    /// protocol has no sessions (rmcp serves its requests without one in
    /// either mode), and a listen request is told for as long as its own
    /// stream stays open, so replicas behind a load balancer, which keep no
    /// session, tell their listeners too.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        if requested.tools_list_changed == Some(true) {
            accepted.tools_list_changed = Some(true);
        }
        Some(accepted)
    }

    /// The session of a `subscriptions/listen` request: told of its
    /// caller's tool list changes until the request ends.
    async fn listen(&self, subscription: SubscriptionContext) -> Result<(), ErrorData> {
        let wants = subscription.accepted().tools_list_changed == Some(true);
        let caller = self
            .caller_in(&subscription.request_context().extensions)
            .cloned();
        let tracked = match caller {
            Some(caller) if wants => {
                tracing::debug!("MCP: a subscriptions/listen stream hears tool list changes");
                Some(Sessions::track(
                    &self.shared,
                    Listener::Subscription(subscription.sink().clone()),
                    caller,
                    self.found.clone(),
                ))
            }
            _ => None,
        };
        subscription.cancelled().await;
        if let Some(id) = tracked {
            self.shared.sessions.untrack(id);
        }
        Ok(())
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
        params: Option<PaginatedRequestParams>,
        request: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let ctx = self.caller(&request)?;
        let after = match params.and_then(|params| params.cursor) {
            Some(cursor) => Some(after_key(cursor)?),
            None => None,
        };
        let tools = self.executor_for(ctx).tools();
        let described = self.shared.described(tools.catalog());
        let page_size = self.shared.page_size;
        let mut listed = Vec::new();
        let mut last = None;
        let mut more = false;
        // The catalog is sorted by key: the page starts past the cursor's.
        let past = |entry: &ToolEntry| after.as_deref().is_none_or(|after| entry.key() > after);
        let shown = |entry: &ToolEntry| self.found.lists(entry);
        for (index, entry) in tools
            .indexed()
            .filter(|(_, entry)| past(entry) && shown(entry))
        {
            if listed.len() == page_size {
                more = true;
                break;
            }
            listed.push(described.tools[index].clone());
            last = Some(entry.key());
        }
        // The search tool closes the last page.
        if !more && search::offered(&tools) {
            listed.push(search::tool());
        }
        let mut result = ListToolsResult::with_all_items(listed);
        if let Some(last) = last.filter(|_| more) {
            result.next_cursor = Some(format!("{CURSOR_PREFIX}{last}"));
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let tools = self.shared.executor.tools();
        if name == search::SEARCH_TOOL && search::offered(&tools) {
            return Some(search::tool());
        }
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
        if name == search::SEARCH_TOOL && search::offered(&executor.tools()) {
            let arguments = call.arguments.unwrap_or_default();
            let kept = self.sessions.then_some(&*self.found);
            let (result, changed) = search::run(&executor, &arguments, kept, self.shared.max_found);
            // This session alone: what it found is its own. Told where it
            // hears of every change; a session not tracked, on its request.
            if changed && !list_changed::tell_finder(&self.shared, &self.found).await {
                let _ = request.peer.notify_tool_list_changed().await;
            }
            return Ok(result.into());
        }
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
        let idempotency_key = idempotency_key(call.meta.as_ref(), &request.meta)?;
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
                let invoke = executor.invoke_found(found, arguments, ctx, idempotency_key);
                until_cancelled(Box::pin(call::serving(&request, invoke)), &request).await
            }
            false => {
                let invoke = executor.invoke_found(found, arguments, ctx, idempotency_key);
                until_cancelled(pin!(invoke), &request).await
            }
        };
        let Some(result) = result else {
            return Err(ErrorData::internal_error("the call was cancelled", None));
        };
        let result = match &self.shared.elicitation {
            Some(elicitation) if matches!(result, Err(CallError::ApprovalRequired(_))) => {
                // Boxed: asking a person is rare, and every call's future
                // would otherwise carry its space.
                let decide =
                    elicitation.decide(&executor, result, kept, ctx, &request, idempotency_key);
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

/// What a `tools/list` cursor starts with; the key of the last tool its
/// page listed follows.
const CURSOR_PREFIX: &str = "after:";

/// The key a `tools/list` cursor names, or the error for a cursor this
/// server did not give.
fn after_key(cursor: String) -> Result<String, ErrorData> {
    match cursor.strip_prefix(CURSOR_PREFIX) {
        Some(key) => Ok(key.to_owned()),
        None => Err(ErrorData::invalid_params(
            format!(
                "invalid cursor `{}`",
                Excerpt::prefix(&cursor, QUOTED_CHARS)
            ),
            None,
        )),
    }
}

/// The `_meta` key of a `tools/call` that carries its idempotency key.
pub(crate) const IDEMPOTENCY_KEY: &str = "idempotencyKey";

/// The longest idempotency key a client may send, in bytes.
pub(crate) const MAX_IDEMPOTENCY_KEY: usize = 255;

/// The idempotency key of a `tools/call`: `_meta.idempotencyKey` of its
/// parameters (where rmcp leaves it, or moves it to the request's own
/// `_meta`). Anything but a string of 1 to 255 bytes is refused.
fn idempotency_key<'m>(
    params: Option<&'m rmcp::model::RequestMetaObject>,
    request: &'m rmcp::model::RequestMetaObject,
) -> Result<Option<&'m str>, ErrorData> {
    let sent = params
        .and_then(|meta| meta.get(IDEMPOTENCY_KEY))
        .or_else(|| request.get(IDEMPOTENCY_KEY));
    match sent {
        None => Ok(None),
        Some(Value::String(key)) if !key.is_empty() && key.len() <= MAX_IDEMPOTENCY_KEY => {
            Ok(Some(key))
        }
        Some(_) => Err(ErrorData::invalid_params(
            format!(
                "`_meta.{IDEMPOTENCY_KEY}` must be a string of 1 to {MAX_IDEMPOTENCY_KEY} bytes"
            ),
            None,
        )),
    }
}

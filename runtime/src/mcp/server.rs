//! The MCP server: the executor it serves, the options it is built with
//! (views, elicitation, a companion handler, MCP calls), and the handler it
//! gives each session.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use rmcp::ServerHandler;
use rmcp::model::Implementation;

use super::companion::Companion;
use super::elicit::Elicitation;
use super::handler::McpHandler;
use super::list_changed::Sessions;
use super::tools::Described;
use crate::executor::Executor;
use crate::registry::View;

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
/// its transport closes; a client of the 2026-07-28 protocol, which does
/// not initialize, for as long as its `subscriptions/listen` request for
/// tool list changes is open, on that request's stream. One task per server does this, started by the
/// first session and ended when the server and its sessions are gone;
/// `tools/call` pays nothing for it. Stateless HTTP
/// ([`HttpOptions::stateless`]) has no sessions to tell: it declares no
/// `listChanged` and sends none.
///
/// ```
/// use toolwright::mcp::McpServer;
/// use toolwright::{tool, Catalog, Container, Effect, Executor, registry::{Selector, View}};
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
/// let server = McpServer::<Actor>::builder(executor, "weather", "1.0.0")
///     .instructions("Ask about the weather.")
///     .views(move |actor| if actor.guest { guests.clone() } else { staff.clone() })
///     .build();
/// // Any rmcp transport can serve a handler; `serve_stdio` and
/// // `http_router` are the usual two.
/// let _handler = server.handler(Actor { guest: true });
/// ```
///
/// [`HttpOptions::stateless`]: super::HttpOptions::stateless
pub struct McpServer<C> {
    pub(super) shared: Arc<Shared<C>>,
}

impl<C> Clone for McpServer<C> {
    fn clone(&self) -> Self {
        McpServer {
            shared: self.shared.clone(),
        }
    }
}

pub(super) struct Shared<C> {
    pub(super) executor: Executor,
    pub(super) implementation: Implementation,
    pub(super) instructions: Option<String>,
    /// The registry's tools as MCP describes them, for the catalog they
    /// were built from; rebuilt only when the registry serves another one.
    pub(super) described: ArcSwapOption<Described>,
    /// Held while `described` is built.
    pub(super) building: std::sync::Mutex<()>,
    pub(super) views: Option<Views<C>>,
    /// The sessions told when the tools they see change.
    pub(super) sessions: Sessions<C>,
    /// Asks the person in the host to approve calls that wait for it.
    pub(super) elicitation: Option<Elicitation<C>>,
    /// Whether tool bodies reach their request through `McpCall::current`.
    pub(super) mcp_calls: bool,
    /// Answers what is not about tools: resources, prompts, completions,
    /// logging levels.
    pub(super) companion: Option<Arc<dyn Companion>>,
    /// The most tools one `tools/list` answer holds.
    pub(super) page_size: usize,
    /// How many deferred tools a session keeps from its searches.
    pub(super) max_found: usize,
}

/// The most tools one `tools/list` answer holds unless
/// [`McpServerBuilder::page_size`] says otherwise: enough that most servers
/// answer in one page, few enough that a catalog of thousands is not one
/// answer of megabytes.
///
/// ```
/// assert_eq!(toolwright::mcp::DEFAULT_PAGE_SIZE, 500);
/// ```
pub const DEFAULT_PAGE_SIZE: usize = 500;

impl<C> Shared<C> {
    /// The executor narrowed to the caller's view, if the server has views.
    pub(super) fn executor_for(&self, ctx: &C) -> Cow<'_, Executor> {
        match &self.views {
            Some(view_of) => Cow::Owned(self.executor.view(view_of(ctx))),
            None => Cow::Borrowed(&self.executor),
        }
    }
}

impl<C: Any + Send + Sync> McpServer<C> {
    /// A server named `name` at `version`, serving every tool of
    /// `executor`, with the default settings; [`builder`](Self::builder)
    /// for others.
    ///
    /// ```
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::empty(), Container::default()).unwrap();
    /// let server = McpServer::<()>::new(executor, "demo", "0.1.0");
    /// # let _ = server;
    /// ```
    pub fn new(executor: Executor, name: impl Into<String>, version: impl Into<String>) -> Self {
        Self::builder(executor, name, version).build()
    }

    /// Settings for a server named `name` at `version`, serving every tool
    /// of `executor`: each is set on the builder, and
    /// [`build`](McpServerBuilder::build) makes the server, whose settings
    /// then stay as they are.
    ///
    /// ```
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::empty(), Container::default()).unwrap();
    /// let server = McpServer::<()>::builder(executor, "demo", "0.1.0")
    ///     .instructions("Ask about anything.")
    ///     .page_size(100)
    ///     .build();
    /// # let _ = server;
    /// ```
    pub fn builder(
        executor: Executor,
        name: impl Into<String>,
        version: impl Into<String>,
    ) -> McpServerBuilder<C> {
        McpServerBuilder {
            shared: Shared {
                executor,
                implementation: Implementation::new(name.into(), version.into()),
                instructions: None,
                described: ArcSwapOption::empty(),
                building: std::sync::Mutex::new(()),
                views: None,
                sessions: Sessions::new(),
                elicitation: None,
                mcp_calls: false,
                companion: None,
                page_size: DEFAULT_PAGE_SIZE,
                max_found: super::search::DEFAULT_MAX_FOUND,
            },
        }
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

    /// The [`rmcp::ServerHandler`] serving every request with `ctx`, for any
    /// rmcp transport.
    pub fn handler(&self, ctx: C) -> McpHandler<C> {
        McpHandler {
            shared: self.shared.clone(),
            context: Some(Arc::new(ctx)),
            sessions: true,
            found: Arc::default(),
        }
    }
}

/// The settings of an [`McpServer`] before it serves: from
/// [`McpServer::builder`], made into the server by [`build`](Self::build).
pub struct McpServerBuilder<C> {
    shared: Shared<C>,
}

impl<C: Any + Send + Sync> McpServerBuilder<C> {
    /// Instructions the client may show the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.shared.instructions = Some(instructions.into());
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
    pub fn views(mut self, view_of: impl Fn(&C) -> View + Send + Sync + 'static) -> Self {
        self.shared.views = Some(Arc::new(view_of));
        self
    }

    /// A call that waits for approval asks the person in the MCP client
    /// through `elicitation/create`, when the client declares the
    /// capability: they see the tool, its arguments and the digest. Their
    /// answer is recorded in the executor's [`Approvals`](crate::approval::Approvals)
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
    /// use toolwright::{Catalog, Container, Executor, Principal, approval::Approvals};
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
    /// let server = McpServer::<User>::builder(executor, "notes", "1.0.0")
    ///     .elicitation(Duration::from_secs(300))
    ///     .build();
    /// # let _ = server;
    /// ```
    ///
    /// [`APPROVAL_REQUIRED`]: super::APPROVAL_REQUIRED
    pub fn elicitation(mut self, timeout: std::time::Duration) -> Self
    where
        C: crate::Principal,
    {
        self.shared.elicitation = Some(Elicitation::new(timeout));
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
    /// let server = McpServer::<()>::builder(executor, "docs", "0.1.0").companion(Documents).build();
    /// let info = ServerHandler::get_info(&server.handler(()));
    /// assert!(info.capabilities.resources.is_some());
    /// assert!(info.capabilities.tools.is_some());
    /// ```
    ///
    /// [`RequestContext`]: rmcp::service::RequestContext
    pub fn companion(mut self, handler: impl ServerHandler) -> Self {
        self.shared.companion = Some(Arc::new(handler));
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
    /// let server = McpServer::<()>::builder(executor, "indexer", "0.1.0").mcp_calls().build();
    /// # let _ = server;
    /// ```
    ///
    /// [`McpCall::current`]: super::McpCall::current
    pub fn mcp_calls(mut self) -> Self {
        self.shared.mcp_calls = true;
        self
    }

    /// How many deferred tools a session keeps from its `search_tools`
    /// calls (at least 1; default [`DEFAULT_MAX_FOUND`](super::DEFAULT_MAX_FOUND)):
    /// past it, the tools found first leave the session's list again.
    ///
    /// While a caller's view holds a deferred tool (`#[tool(defer)]`,
    /// [`Registry::defer`](crate::registry::Registry::defer)), `tools/list`
    /// shows the tools that are not deferred and one more, `search_tools`:
    /// it ranks the view's deferred tools by what the model asks, answers
    /// with the tools found and their input schemas, and adds them to that
    /// session's list, telling that session alone that its list changed.
    /// What a session found ends with it. In stateless HTTP, where no
    /// session lasts, a search only answers. A deferred tool is called
    /// like any other, found or not: deferral is no permission.
    ///
    /// ```
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let server = McpServer::<()>::builder(executor, "gateway", "0.1.0").max_found(8).build();
    /// # let _ = server;
    /// ```
    pub fn max_found(mut self, tools: usize) -> Self {
        self.shared.max_found = tools.max(1);
        self
    }

    /// The most tools one `tools/list` answer holds (at least 1; default
    /// [`DEFAULT_PAGE_SIZE`]). A longer list is answered in pages: each
    /// answer's `nextCursor` asks for the next one, as MCP clients do when
    /// they list all tools. A cursor names the last tool of its page, so a
    /// list that changes between pages neither repeats nor skips a tool
    /// that stayed.
    ///
    /// ```
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let server = McpServer::<()>::builder(executor, "gateway", "0.1.0").page_size(100).build();
    /// # let _ = server;
    /// ```
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.shared.page_size = page_size.max(1);
        self
    }

    /// The server, with these settings.
    pub fn build(self) -> McpServer<C> {
        McpServer {
            shared: Arc::new(self.shared),
        }
    }
}

impl<C> std::fmt::Debug for McpServerBuilder<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("name", &self.shared.implementation.name)
            .finish_non_exhaustive()
    }
}

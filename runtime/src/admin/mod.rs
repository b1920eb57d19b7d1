#![doc = include_str!("../../docs/admin.md")]

mod api;
mod approvals;
mod auth;
mod etag;
mod log;
mod page;
mod serve;
mod state;
mod tools;
mod trail;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};

use crate::Principal;
use crate::executor::Executor;
use crate::observe::ExecutionLog;
use crate::web::hosts::{AllowedHosts, LOOPBACK_HOSTS};
use crate::web::listener::{DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, Limits};

pub use serve::{ServeError, serve, serve_on};

/// The largest request body the admin API reads unless
/// [`Admin::body_limit`] says otherwise: 64 KiB. A larger one gets 413.
///
/// ```
/// assert_eq!(toolwright::admin::DEFAULT_BODY_LIMIT, 64 * 1024);
/// ```
pub const DEFAULT_BODY_LIMIT: usize = 64 * 1024;

/// The most connections [`serve`] keeps open at once unless
/// [`Admin::max_connections`] says otherwise: 64. Fewer than MCP's 512
/// (`HttpOptions::max_connections`): a flood on the admin's port leaves
/// file descriptors for the MCP port, and the other way round.
///
/// ```
/// assert_eq!(toolwright::admin::DEFAULT_MAX_CONNECTIONS, 64);
/// ```
pub const DEFAULT_MAX_CONNECTIONS: usize = 64;

/// The admin API and page over one executor: its registry, its approvals
/// and, if given, its execution log, for the operators holding a token.
///
/// Build it, then mount [`router`](Self::router) where the application
/// likes, or serve it on its own with [`serve`]. Cheap to clone.
///
/// ```
/// use toolwright::admin::{Admin, Operator};
/// use toolwright::observe::ExecutionLog;
/// use toolwright::{Catalog, Container, Executor};
///
/// let log = ExecutionLog::new(10_000).unwrap();
/// let catalog = Catalog::builder().build().unwrap();
/// let executor = Executor::builder(catalog, Container::default())
///     .observe(log.clone())
///     .build()
///     .unwrap();
/// let admin = Admin::new(executor)
///     .log(log)
///     .operator("a-long-random-token-for-alice", Operator::new("alice").role("approver"))
///     .operator("a-long-random-token-for-bob", Operator::new("bob"));
/// let app = axum::Router::new().nest("/admin", admin.router());
/// # let _ = app;
/// ```
#[derive(Clone)]
pub struct Admin {
    shared: Arc<Shared>,
}

/// What every request handler reads.
pub(crate) struct Shared {
    pub(crate) executor: Executor,
    pub(crate) log: Option<ExecutionLog>,
    pub(crate) operators: auth::Operators,
    pub(crate) allowed_origins: Vec<auth::Origin>,
    pub(crate) allowed_hosts: AllowedHosts,
    pub(crate) body_limit: usize,
    pub(crate) public: bool,
    /// What [`serve`] enforces on each connection.
    pub(crate) limits: Limits,
    /// Changes made through the admin take turns, so that the `If-Match`
    /// check and the change it guards see the same state (changes the
    /// application makes itself do not take it).
    pub(crate) writing: tokio::sync::Mutex<()>,
}

/// Someone allowed to use the admin API: an id (who disabled a tool, who
/// decided an approval) and roles (see
/// [`ApprovalsBuilder::approver_role`](crate::approval::ApprovalsBuilder::approver_role)).
///
/// It is the [`Principal`] the admin API decides approvals as, so the
/// four-eyes rule applies: an operator cannot decide a request made under
/// the same id.
///
/// ```
/// use toolwright::admin::Operator;
/// use toolwright::Principal;
///
/// let carol = Operator::new("carol").role("approver");
/// assert_eq!(carol.id(), "carol");
/// assert!(carol.has_role("approver"));
/// assert!(!carol.has_role("admin"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator {
    id: String,
    roles: Vec<String>,
}

impl Operator {
    /// An operator with no roles.
    ///
    /// ```
    /// use toolwright::admin::Operator;
    /// let ops = Operator::new("ops@example.com");
    /// # let _ = ops;
    /// ```
    pub fn new(id: impl Into<String>) -> Self {
        Operator {
            id: id.into(),
            roles: Vec::new(),
        }
    }

    /// The operator also holds `role`.
    ///
    /// ```
    /// use toolwright::admin::Operator;
    /// use toolwright::Principal;
    /// assert!(Operator::new("dana").role("manager").has_role("manager"));
    /// ```
    pub fn role(mut self, role: impl Into<String>) -> Self {
        self.roles.push(role.into());
        self
    }
}

impl Principal for Operator {
    fn id(&self) -> &str {
        &self.id
    }

    fn has_role(&self, role: &str) -> bool {
        self.roles.iter().any(|r| r == role)
    }
}

impl Admin {
    /// The admin of `executor`, with no operator yet (add them with
    /// [`operator`](Self::operator); with none, every API request is
    /// refused), no log, only its own origin allowed, and only the loopback
    /// hosts (see [`allowed_hosts`](Self::allowed_hosts)).
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let admin = Admin::new(executor);
    /// # let _ = admin;
    /// ```
    pub fn new(executor: Executor) -> Self {
        Admin {
            shared: Arc::new(Shared {
                executor,
                log: None,
                operators: auth::Operators::default(),
                allowed_origins: Vec::new(),
                allowed_hosts: AllowedHosts::new(LOOPBACK_HOSTS),
                body_limit: DEFAULT_BODY_LIMIT,
                public: false,
                limits: Limits {
                    max_connections: DEFAULT_MAX_CONNECTIONS,
                    header_timeout: DEFAULT_HEADER_TIMEOUT,
                    idle_timeout: DEFAULT_IDLE_TIMEOUT,
                },
                writing: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// Shows `log` (the executor's [`ExecutionLog`] observer) at `api/log`;
    /// without one, `api/log` answers 404.
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::observe::ExecutionLog;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let log = ExecutionLog::new(1_000).unwrap();
    /// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
    ///     .observe(log.clone())
    ///     .build()
    ///     .unwrap();
    /// let admin = Admin::new(executor).log(log);
    /// # let _ = admin;
    /// ```
    pub fn log(self, log: ExecutionLog) -> Self {
        self.with(|shared| shared.log = Some(log))
    }

    /// Lets whoever sends `token` as a bearer token in as `operator`.
    /// Tokens are kept only as SHA-256 digests and compared in constant
    /// time. Use long random tokens; an empty one never lets anyone in.
    ///
    /// ```
    /// use toolwright::admin::{Admin, Operator};
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let token = std::env::var("ADMIN_TOKEN").unwrap_or_else(|_| "dev-only-token-0123456789".into());
    /// let admin = Admin::new(executor).operator(token, Operator::new("ops"));
    /// # let _ = admin;
    /// ```
    pub fn operator(self, token: impl AsRef<[u8]>, operator: Operator) -> Self {
        let token = token.as_ref().to_vec();
        self.with(|shared| shared.operators.add(&token, operator))
    }

    /// Also accepts requests from pages served at `origin`
    /// (`scheme://host[:port]`), such as a dashboard on another host that
    /// calls the API. Requests whose `Origin` is neither this nor the
    /// admin's own are refused with 403. No CORS headers are sent either
    /// way: a page on another origin can only use the API through a proxy
    /// or a non-browser client.
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let admin = Admin::new(executor).allow_origin("https://ops.example.com");
    /// # let _ = admin;
    /// ```
    pub fn allow_origin(self, origin: &str) -> Self {
        match auth::Origin::parse(origin) {
            Some(origin) => self.with(|shared| shared.allowed_origins.push(origin)),
            None => {
                tracing::warn!(origin, "not an origin (scheme://host[:port]); ignored");
                self
            }
        }
    }

    /// Answers only requests whose `Host` is one of `hosts`: `host` for
    /// any port, or `host:port`. Others get 403 and a request with no
    /// `Host` 400, before the origin and token checks: a page whose DNS
    /// name an attacker points at the admin's address sends its own name as
    /// `Host`, and its own origin matches it. By default, the loopback
    /// names `localhost`, `127.0.0.1` and `::1`, on any port; no hosts
    /// accept any, for an admin behind a proxy that checks `Host` itself.
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// // Reached through the proxy at ops.example.com, or on loopback.
    /// let admin = Admin::new(executor)
    ///     .public()
    ///     .allowed_hosts(["ops.example.com", "localhost", "127.0.0.1", "::1"]);
    /// # let _ = admin;
    /// ```
    pub fn allowed_hosts(self, hosts: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        let hosts = AllowedHosts::new(hosts);
        self.with(|shared| shared.allowed_hosts = hosts)
    }

    /// Request bodies larger than `bytes` are refused with 413
    /// ([`DEFAULT_BODY_LIMIT`] unless set).
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// // A registry of thousands of tools exports a larger state.
    /// let admin = Admin::new(executor).body_limit(1024 * 1024);
    /// # let _ = admin;
    /// ```
    pub fn body_limit(self, bytes: usize) -> Self {
        self.with(|shared| shared.body_limit = bytes)
    }

    /// Lets [`serve`] listen on an address other machines can reach. By
    /// default it refuses anything but loopback.
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let admin = Admin::new(executor).public();
    /// assert!(admin.is_public());
    /// ```
    pub fn public(self) -> Self {
        self.with(|shared| shared.public = true)
    }

    /// [`serve`] keeps at most `connections` open at once
    /// ([`DEFAULT_MAX_CONNECTIONS`] unless set); one more is answered 503
    /// and closed, and past a few such answers at once, closed unanswered.
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// // A handful of operators, each with a tab open.
    /// let admin = Admin::new(executor).max_connections(16);
    /// # let _ = admin;
    /// ```
    pub fn max_connections(self, connections: usize) -> Self {
        self.with(|shared| shared.limits.max_connections = connections)
    }

    /// [`serve`] closes a connection that has begun a request but not sent
    /// its whole head within `timeout` (10 s unless set, as for MCP).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let admin = Admin::new(executor).header_timeout(Duration::from_secs(5));
    /// # let _ = admin;
    /// ```
    pub fn header_timeout(self, timeout: Duration) -> Self {
        self.with(|shared| shared.limits.header_timeout = timeout)
    }

    /// [`serve`] closes a connection with no request in progress after
    /// `timeout` (60 s unless set, as for MCP). A request in progress is
    /// never cut by either timeout.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let admin = Admin::new(executor).idle_timeout(Duration::from_secs(30));
    /// # let _ = admin;
    /// ```
    pub fn idle_timeout(self, timeout: Duration) -> Self {
        self.with(|shared| shared.limits.idle_timeout = timeout)
    }

    /// Whether [`public`](Self::public) was asked for.
    ///
    /// ```
    /// use toolwright::admin::Admin;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// assert!(!Admin::new(executor).is_public());
    /// ```
    pub fn is_public(&self) -> bool {
        self.shared.public
    }

    /// The API and the page, as an axum router to mount anywhere
    /// (`Router::new().nest("/admin", admin.router())`) or serve as it is.
    /// The page is at the mount point (`/admin`, and also `/admin/` where
    /// the router is reached with a trailing slash, as under
    /// `nest_service`). See the [module documentation](self) for the
    /// endpoints.
    ///
    /// ```
    /// use toolwright::admin::{Admin, Operator};
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::new(Catalog::builder().build().unwrap(), Container::default()).unwrap();
    /// let admin = Admin::new(executor).operator("a-long-random-token", Operator::new("ops"));
    /// let app: axum::Router = axum::Router::new().nest("/admin", admin.router());
    /// # let _ = app;
    /// ```
    pub fn router(&self) -> Router {
        let api = Router::new()
            .route("/api/tools", get(tools::list))
            .route("/api/tools/{name}", get(tools::one))
            .route("/api/tools/{name}/disable", post(tools::disable))
            .route("/api/tools/{name}/enable", post(tools::enable))
            .route("/api/tools/{name}/defer", post(tools::defer))
            .route("/api/tools/{name}/undefer", post(tools::undefer))
            .route("/api/approvals", get(approvals::list))
            .route("/api/approvals/{id}", get(approvals::one))
            .route("/api/approvals/{id}/approve", post(approvals::approve))
            .route("/api/approvals/{id}/reject", post(approvals::reject))
            .route("/api/log", get(log::page))
            .route("/api/state", get(state::export).put(state::import))
            .route("/api/{*rest}", axum::routing::any(api::not_found))
            .route_layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                auth::authenticate,
            ));
        Router::new()
            .route("/", get(page::index))
            .route("/app.js", get(page::script))
            .route("/app.css", get(page::style))
            .merge(api)
            .fallback(api::not_found)
            .layer(axum::middleware::from_fn(api::security_headers))
            .layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                auth::check_origin,
            ))
            .layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                auth::check_host,
            ))
            .with_state(self.shared.clone())
    }

    /// Changes the settings before the admin is shared.
    fn with(mut self, change: impl FnOnce(&mut Shared)) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => change(shared),
            None => {
                let old = &*self.shared;
                let mut copy = Shared {
                    executor: old.executor.clone(),
                    log: old.log.clone(),
                    operators: old.operators.clone(),
                    allowed_origins: old.allowed_origins.clone(),
                    allowed_hosts: old.allowed_hosts.clone(),
                    body_limit: old.body_limit,
                    public: old.public,
                    limits: old.limits,
                    writing: tokio::sync::Mutex::new(()),
                };
                change(&mut copy);
                self.shared = Arc::new(copy);
            }
        }
        self
    }
}

impl fmt::Debug for Admin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admin")
            .field("operators", &self.shared.operators.len())
            .field("log", &self.shared.log.is_some())
            .field("body_limit", &self.shared.body_limit)
            .field("public", &self.shared.public)
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

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
//! (or the executor's [`max_result`](crate::executor::ExecutorBuilder::max_result)),
//! with a marker that says how many more there were. `structuredContent`,
//! sent only for a tool with an output schema, must match that schema: a
//! plain string (a schema with no rule on it) is cut as the text is; any
//! other value over the bound makes the result an error that names the
//! bound, since a cut value would not match. A tool whose results may be
//! large should bound them itself, or declare no output schema.
//!
//! Resources, prompts, completions and logging levels are the
//! application's, served by an rmcp handler of its own beside the tools
//! ([`McpServerBuilder::companion`]). On a server built
//! [`mcp_calls`](McpServerBuilder::mcp_calls), a tool body reaches the
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
//!
//! [`Executor`]: crate::Executor
//! [`Executor::invoke`]: crate::Executor::invoke

mod auth;
mod call;
mod companion;
mod elicit;
mod error;
mod handler;
mod jsonrpc;
#[cfg(feature = "oauth")]
mod jwt;
mod list_changed;
mod logs;
mod result;
mod search;
mod server;
mod stdio;
mod streamable_http;
mod tools;

pub use auth::{
    Anonymous, Authenticate, Rejection, ResourceMetadata, allow_anonymous, bearer_token,
};
pub use call::McpCall;
pub use error::ServeError;
pub use handler::McpHandler;
#[cfg(feature = "oauth")]
pub use jwt::{Claims, JwtAuth};
pub use logs::log_filter;
pub use result::{APPROVAL_REQUIRED, approval_request};
pub use search::DEFAULT_MAX_FOUND;
pub use server::{DEFAULT_PAGE_SIZE, McpServer, McpServerBuilder};
pub use stdio::StdioOptions;
pub use streamable_http::{DEFAULT_HTTP_ADDR, HttpOptions};
pub(crate) use tools::listed;

pub use axum;
pub use http;
#[cfg(feature = "oauth")]
pub use jsonwebtoken;
pub use rmcp;

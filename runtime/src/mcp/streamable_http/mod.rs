//! MCP's Streamable HTTP transport: a router to mount in the application's
//! own axum router, or a server that owns its connections. A request passes
//! CORS, the declared body length, authentication, the session guard (with
//! sessions) and the body reader, in that order, before rmcp serves it.

mod body;
mod cors;
mod options;
#[cfg(feature = "openapi")]
mod rest;
mod router;
mod serve;
mod sessions;

pub use options::HttpOptions;
pub(super) use router::CallerContext;
pub use serve::DEFAULT_HTTP_ADDR;

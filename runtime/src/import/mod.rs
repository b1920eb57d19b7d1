//! Tools the application does not own, served as its own: imported into
//! the registry as dynamic tools, so that views, policy, approvals, limits
//! and audit run on them exactly as on local tools.
//!
//! Every trust decision is explicit and nothing defaults to "allow": the
//! commands an import may start, the environment it may pass on, the
//! remote tools it may serve, and each tool's effect (`destructive`, so
//! approved, unless the application decides otherwise).
//!
//! - [`mcp`]: another MCP server, a child process over stdio.

pub mod mcp;

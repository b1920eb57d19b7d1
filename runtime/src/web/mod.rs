//! What every HTTP port the library opens shares (MCP's, the admin's):
//! the acceptor that caps and times out its connections.

pub(crate) mod listener;

//! What every HTTP port the library opens shares (MCP's, the admin's):
//! the acceptor that caps and times out its connections, and the `Host`
//! check that keeps DNS-rebinding pages out, and the reading of bearer
//! tokens.

pub(crate) mod credentials;
pub(crate) mod hosts;
pub(crate) mod listener;

//! Another MCP server's tools, as dynamic tools of the registry.
//!
//! An [`StdioUpstream`] names a server to start (a command with its
//! arguments) and the environment variables it may read; an `HttpUpstream`
//! (feature `import-mcp-http`) a URL, `https` unless on a loopback address.
//! Either names the remote tools to serve ([`RemoteTools`]) and the effect
//! of each; [`connect`] starts it
//! only if the application's [`Allowlist`] lists the command or URL, then lists
//! its tools and builds one [`DynamicTool`](crate::registry::DynamicTool) per allowed
//! tool, which calls it over the one session:
//!
//! - keys and names are qualified by the namespace (remote `get-sum` in
//!   `calc` is key `calc.get_sum`, name `calc_get-sum`), so two servers, or
//!   a server and a local tool, never share one;
//! - the remote annotations are hints nobody checked: an imported tool is
//!   `destructive`, so it waits for approval, unless
//!   [`StdioUpstream::effect`] says otherwise;
//! - arguments are checked against the remote input schema before
//!   anything is sent, as for any tool; a tool whose schema no validator
//!   compiles is registered switched off with the reason
//!   ([`Imported::malformed`]), and the others load;
//! - a remote tool error is the call's tool error, its text kept; a failed
//!   exchange with the server is the call's error too, with its source; a
//!   call given up here (its timeout, its client's cancel) is cancelled
//!   there with `notifications/cancelled`; the server's progress on a
//!   call goes to the MCP client that made it, when this application's
//!   `McpServer` reaches its calls (`mcp_calls()`, feature `mcp`);
//! - the server's own requests are refused, and the capabilities not even
//!   announced, unless the application opts in: sampling with
//!   [`Upstream::sampling`], elicitation with [`Upstream::elicitation`],
//!   each given the function that answers (roots are an empty list);
//! - each tool's definition is pinned ([`Pins`]): one that changes after it
//!   was accepted is switched off with the reason `definition changed`,
//!   and only that one, with what changed as its reason's detail (the
//!   admin API shows it beside the accepted definition). With approvals, the import serves one more tool,
//!   `<namespace>.accept_definition` (tag `pins`, a `write`): a person
//!   asks it to accept the changed definition of a tool, by the digest the
//!   change reports; another person approves it in the ledger (four eyes,
//!   the call audited as any write); then the pin is updated
//!   ([`Upstream::on_pinned`] keeps it) and the tool served again. Hide
//!   the tag from models with a view;
//! - when the server says its tool list changed (`list_changed`, unscoped
//!   or on a 2026-07-28 `subscriptions/listen` stream), and after a lost
//!   session is replaced, its tools are listed again: one whose definition
//!   differs from its pin, or that the server no longer offers, refuses
//!   calls from then on and is switched off in the registry
//!   [`Imported::register`] put it in, which tells that registry's MCP
//!   clients. A tool first offered after the import, when every remote
//!   tool is served ([`RemoteTools::all`]), is pinned as first seen and
//!   served in that registry under the same rules (without approvals, only
//!   if decided `read` ahead); the pins go to [`Upstream::on_pinned`].
//!
//! A message from a stdio server longer than [`Upstream::max_response`]
//! (8 MiB unless set) is dropped as it is read, never held whole, and the
//! call it answers fails at once, saying so; a shorter one is cut to
//! [`Upstream::max_result`] for the model.
//!
//! One session serves every call. A call that finds it lost (the server
//! died) starts a new one first; a call in flight when it was lost fails,
//! never hangs. A start that fails is tried again, with backoff, by later
//! calls. The child process ends when the last of its tools is dropped.
//!
//! ```no_run
//! use toolwright::import::mcp::{Allowlist, RemoteTools, StdioUpstream};
//! use toolwright::{Catalog, Effect, registry::Registry};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // What this application may start, whatever a configuration file says.
//! let allowlist = Allowlist::new()
//!     .command("mcp-server-everything", ["stdio"])
//!     .env(["PATH"]);
//! let imported = StdioUpstream::new("everything", "mcp-server-everything", ["stdio"])
//!     .env(["PATH"])
//!     .tools(RemoteTools::only(["echo", "get-sum"]))
//!     .effect("echo", Effect::Read)
//!     .effect("get-sum", Effect::Read)
//!     .connect(&allowlist)
//!     .await?;
//! // Keep `imported.pins()` and pass them to the next import.
//! let registry = Registry::new(Catalog::empty());
//! imported.register(&registry)?;
//! # Ok(())
//! # }
//! ```
//!
//! [`connect`]: StdioUpstream::connect

mod allowlist;
mod client;
mod connection;
#[cfg(feature = "import-mcp-http")]
mod http;
mod lines;
mod live;
mod mapping;
mod pins;
mod upstream;

pub use super::{ImportError, RemoteTools, Skipped};
pub use allowlist::Allowlist;
#[cfg(feature = "import-mcp-http")]
pub use http::{Http, HttpUpstream};
pub use pins::{Changed, Pins};
pub use upstream::{DEFAULT_MAX_RESPONSE, Imported, Stdio, StdioUpstream, Upstream};

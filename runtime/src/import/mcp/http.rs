//! An upstream MCP server reached over Streamable HTTP, through rmcp's
//! client on reqwest (rustls).

use std::sync::Arc;

use rmcp::transport::StreamableHttpClientTransport;

use super::client::Hub;
use super::connection::{Session, Start};
use super::upstream::{Upstream, handshake};
use super::{Allowlist, ImportError, Imported};
use crate::import::secure;

/// An MCP server to import tools from over Streamable HTTP: see
/// [the module](super). The settings of [`Upstream`] apply.
///
/// Its URL must be on the [`Allowlist`], exactly as written there, and be
/// `https` unless its host is a loopback address.
///
/// ```
/// use toolwright::import::mcp::{HttpUpstream, RemoteTools};
/// use toolwright::Effect;
///
/// let upstream = HttpUpstream::new("docs", "https://mcp.example.com/mcp")
///     .tools(RemoteTools::only(["search"]))
///     .effect("search", Effect::Read);
/// # let _ = upstream;
/// ```
pub type HttpUpstream = Upstream<Http>;

/// How an [`HttpUpstream`] is reached: its URL.
#[derive(Debug, Clone)]
pub struct Http {
    url: String,
}

impl HttpUpstream {
    /// The server at `url`, its tools served under `namespace`. It serves
    /// no tool until [`tools`](Self::tools) says which.
    pub fn new(namespace: impl Into<String>, url: impl Into<String>) -> Self {
        Upstream::reached(namespace.into(), Http { url: url.into() })
    }

    /// Opens one session with the server, if the allowlist lists its URL
    /// and the URL is `https` or on a loopback address, lists its tools
    /// and builds one dynamic tool for each one served, as
    /// [`StdioUpstream::connect`](super::StdioUpstream::connect) does; a
    /// lost session is replaced as there.
    pub async fn connect(self, allowlist: &Allowlist) -> Result<Imported, ImportError> {
        self.check_namespace()?;
        let url = &self.reach().url;
        if !allowlist.allows_url(url) {
            return Err(ImportError::UrlNotAllowed { url: url.clone() });
        }
        if !secure(url) {
            return Err(ImportError::UrlNotSecure { url: url.clone() });
        }
        let signal = self.hub();
        let session = open(url.clone(), signal.clone()).await?;
        let (again, restart) = (url.clone(), signal.clone());
        let start: Start = Box::new(move || Box::pin(open(again.clone(), restart.clone())));
        self.import(session, start, url, signal).await
    }
}

/// A session with the server at `url`.
async fn open(url: String, signal: Arc<Hub>) -> Result<Session, ImportError> {
    let transport = StreamableHttpClientTransport::from_uri(url.as_str());
    handshake(transport, &url, signal, None).await
}

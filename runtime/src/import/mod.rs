//! Tools the application does not own, served as its own: imported into
//! the registry as dynamic tools, so that views, policy, approvals, limits
//! and audit run on them exactly as on local tools.
//!
//! Every trust decision is explicit and nothing defaults to "allow": the
//! commands an import may start, the environment it may pass on, the
//! URLs it reaches, the remote tools it may serve ([`RemoteTools`]), and
//! each tool's effect.
//!
//! - `mcp` (feature `import-mcp`): another MCP server, a child process over
//!   stdio or (feature `import-mcp-http`) a URL over Streamable HTTP; its
//!   tools are `destructive`, so approved, unless the application decides
//!   otherwise.
//! - `openapi` (feature `import-openapi`): the operations of an OpenAPI 3.0
//!   or 3.1 document, called over HTTP; `GET` and `HEAD` are `read`,
//!   `DELETE` is `destructive` and the rest `write`, unless the application
//!   decides otherwise.
//!
//! Either way a tool's key and name are qualified by the namespace the
//! application gives, so that two upstreams, or an upstream and a local
//! tool, never share one.

mod error;
mod naming;
mod settings;

#[cfg(feature = "import-mcp")]
pub mod mcp;
#[cfg(feature = "import-openapi")]
pub mod openapi;

pub use error::{ImportError, Skipped};
pub use settings::RemoteTools;

#[cfg(any(feature = "import-mcp-http", feature = "import-openapi"))]
/// Whether `url` is `https`, or plain `http` to a loopback address.
pub(crate) fn secure(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let loopback = |host: &str| {
        let ip = host.trim_start_matches('[').trim_end_matches(']');
        host == "localhost"
            || ip
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    };
    match (url.scheme(), url.host_str()) {
        ("https", Some(_)) => true,
        ("http", Some(host)) => loopback(host),
        _ => false,
    }
}

#[cfg(all(test, any(feature = "import-mcp-http", feature = "import-openapi")))]
mod tests {
    use super::secure;

    #[test]
    fn only_https_or_loopback_is_secure() {
        assert!(secure("https://mcp.example.com/mcp"));
        assert!(secure("http://127.0.0.1:3001/mcp"));
        assert!(secure("http://[::1]:3001/mcp"));
        assert!(secure("http://localhost/mcp"));
        assert!(!secure("http://mcp.example.com/mcp"));
        assert!(!secure("http://10.0.0.1/mcp"));
        assert!(!secure("ftp://127.0.0.1/mcp"));
        assert!(!secure("not a url"));
    }
}

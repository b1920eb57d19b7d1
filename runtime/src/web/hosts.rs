//! DNS-rebinding protection: the `Host` names a port answers to.
//!
//! A page on `evil.example` whose name the attacker rebinds to 127.0.0.1
//! reaches a loopback server with its own origin, `Host: evil.example` and
//! a matching `Origin`: only the `Host` tells it from a page the server
//! served. So every port checks it first, before CORS and credentials.

use std::sync::Arc;

use http::{HeaderMap, StatusCode, Uri};

/// The names a server on loopback is reached by, on any port: the default
/// of every port.
pub(crate) const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The `Host` names a port answers to; empty, any (for a server behind a
/// proxy that checks it).
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    allowed: Arc<[Authority]>,
}

/// A host and, if it names one, a port, as a `Host` header or an entry of
/// the allowed list gives them: lowercase, IPv6 without its brackets.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Authority {
    host: String,
    port: Option<u16>,
}

impl Authority {
    fn new(host: &str, port: Option<u16>) -> Self {
        Authority {
            host: host.trim_matches(['[', ']']).to_ascii_lowercase(),
            port,
        }
    }

    /// An entry of an allowed list: `host` (any port) or `host:port`; a
    /// bare IPv6 address (`::1`) is a host.
    fn entry(entry: &str) -> Option<Authority> {
        let entry = entry.trim();
        if entry.is_empty() {
            return None;
        }
        if entry.matches(':').count() > 1 && !entry.starts_with('[') {
            return Some(Authority::new(entry, None));
        }
        match entry.parse::<http::uri::Authority>() {
            Ok(authority) => Some(Authority::new(authority.host(), authority.port_u16())),
            Err(_) => Some(Authority::new(entry, None)),
        }
    }

    /// Whether a request for `self` is one this allowed entry admits.
    fn admitted_by(&self, allowed: &Authority) -> bool {
        allowed.host == self.host && allowed.port.is_none_or(|port| self.port == Some(port))
    }
}

/// Why a request's `Host` was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostRefusal {
    /// No `Host` header, and no authority in the request's URI: 400.
    Missing,
    /// A `Host` that is no `host[:port]`: 400.
    Malformed,
    /// A `Host` not on the list: 403.
    NotAllowed,
}

impl HostRefusal {
    /// The status a refused request is answered with.
    pub(crate) fn status(self) -> StatusCode {
        match self {
            HostRefusal::Missing | HostRefusal::Malformed => StatusCode::BAD_REQUEST,
            HostRefusal::NotAllowed => StatusCode::FORBIDDEN,
        }
    }

    /// What the answer says.
    pub(crate) fn message(self) -> &'static str {
        match self {
            HostRefusal::Missing => "a Host header is required",
            HostRefusal::Malformed => "the Host header is not a host[:port]",
            HostRefusal::NotAllowed => "requests for this Host are not allowed",
        }
    }
}

impl AllowedHosts {
    /// The hosts of `entries` (`host` for any port, `host:port`); entries
    /// that are no host are left out. No entries: any host.
    pub(crate) fn new(entries: impl IntoIterator<Item = impl AsRef<str>>) -> Self {
        AllowedHosts {
            allowed: entries
                .into_iter()
                .filter_map(|entry| Authority::entry(entry.as_ref()))
                .collect(),
        }
    }

    /// Whether any host is allowed.
    pub(crate) fn is_any(&self) -> bool {
        self.allowed.is_empty()
    }

    /// Whether only loopback names are allowed: a server reached from
    /// other machines by another name would refuse every request.
    #[cfg(feature = "admin")]
    pub(crate) fn only_loopback(&self) -> bool {
        !self.is_any()
            && self
                .allowed
                .iter()
                .all(|allowed| LOOPBACK_HOSTS.contains(&allowed.host.as_str()))
    }

    /// Lets a request for an allowed host through. The host is the `Host`
    /// header's, else the URI's authority (HTTP/2's `:authority`, which
    /// `Router::nest` may leave without a `Host`).
    pub(crate) fn check(&self, uri: &Uri, headers: &HeaderMap) -> Result<(), HostRefusal> {
        if self.is_any() {
            return Ok(());
        }
        let host = match headers.get(http::header::HOST) {
            Some(value) => {
                let authority = value
                    .to_str()
                    .ok()
                    .and_then(|text| text.parse::<http::uri::Authority>().ok())
                    .ok_or(HostRefusal::Malformed)?;
                Authority::new(authority.host(), authority.port_u16())
            }
            None => {
                let authority = uri.authority().ok_or(HostRefusal::Missing)?;
                Authority::new(authority.host(), authority.port_u16())
            }
        };
        if self.allowed.iter().any(|allowed| host.admitted_by(allowed)) {
            return Ok(());
        }
        tracing::warn!(
            host = %host.host,
            "refused a request for a Host not allowed (DNS rebinding?)"
        );
        Err(HostRefusal::NotAllowed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(allowed: &AllowedHosts, host: Option<&str>) -> Result<(), HostRefusal> {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(http::header::HOST, host.parse().unwrap());
        }
        allowed.check(&Uri::from_static("/mcp"), &headers)
    }

    #[test]
    fn loopback_names_pass_on_any_port_and_others_are_refused() {
        let loopback = AllowedHosts::new(LOOPBACK_HOSTS);
        for host in [
            "localhost",
            "LOCALHOST:8000",
            "127.0.0.1:1",
            "[::1]:8001",
            "[::1]",
        ] {
            assert_eq!(check(&loopback, Some(host)), Ok(()), "{host}");
        }
        for host in [
            "evil.example",
            "evil.example:8000",
            "127.0.0.2",
            "localhost.evil.example",
        ] {
            assert_eq!(
                check(&loopback, Some(host)),
                Err(HostRefusal::NotAllowed),
                "{host}"
            );
        }
        assert_eq!(check(&loopback, None), Err(HostRefusal::Missing));
        assert_eq!(check(&loopback, Some("a b")), Err(HostRefusal::Malformed));
    }

    #[test]
    fn an_entry_with_a_port_allows_that_port_only() {
        let allowed = AllowedHosts::new(["admin.example:8443", "[::1]"]);
        assert_eq!(check(&allowed, Some("Admin.Example:8443")), Ok(()));
        assert_eq!(
            check(&allowed, Some("admin.example:443")),
            Err(HostRefusal::NotAllowed)
        );
        assert_eq!(
            check(&allowed, Some("admin.example")),
            Err(HostRefusal::NotAllowed)
        );
        assert_eq!(check(&allowed, Some("[::1]:9")), Ok(()));
    }

    #[test]
    fn no_entries_allow_any_host() {
        let any = AllowedHosts::new(Vec::<String>::new());
        assert!(any.is_any());
        assert_eq!(check(&any, Some("evil.example")), Ok(()));
        assert_eq!(check(&any, None), Ok(()));
    }

    #[cfg(feature = "admin")]
    #[test]
    fn only_loopback_says_whether_other_names_are_refused() {
        assert!(AllowedHosts::new(LOOPBACK_HOSTS).only_loopback());
        assert!(AllowedHosts::new(["[::1]:8001", "LOCALHOST"]).only_loopback());
        assert!(!AllowedHosts::new(["localhost", "ops.example.com"]).only_loopback());
        assert!(!AllowedHosts::new(Vec::<String>::new()).only_loopback());
    }

    #[test]
    fn a_request_without_host_uses_its_uris_authority() {
        let loopback = AllowedHosts::new(LOOPBACK_HOSTS);
        let uri = Uri::from_static("http://127.0.0.1:8000/mcp");
        assert_eq!(loopback.check(&uri, &HeaderMap::new()), Ok(()));
        let uri = Uri::from_static("http://evil.example/mcp");
        assert_eq!(
            loopback.check(&uri, &HeaderMap::new()),
            Err(HostRefusal::NotAllowed)
        );
    }
}

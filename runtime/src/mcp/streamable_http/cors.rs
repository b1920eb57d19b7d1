//! Browser pages on the allowed origins: preflights answered, and the
//! headers a page needs exposed.

use std::sync::Arc;
use std::time::Duration;

/// CORS for the allowed origins: a preflight from one of them is answered
/// with what the endpoint accepts, and responses to it expose the session
/// and authentication headers a page needs. Other origins get no
/// `Access-Control-*` headers (and rmcp refuses their requests).
pub(super) fn cors(allowed: &[String]) -> tower_http::cors::CorsLayer {
    use tower_http::cors::{AllowHeaders, AllowOrigin, CorsLayer};
    let allowed: Arc<[AllowedOrigin]> = allowed
        .iter()
        .filter_map(|o| AllowedOrigin::parse(o))
        .collect();
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(move |origin, _| {
            let origin = origin.to_str().ok().and_then(Origin::parse);
            origin.is_some_and(|origin| allowed.iter().any(|a| a.admits(&origin)))
        }))
        .allow_methods([http::Method::GET, http::Method::POST, http::Method::DELETE])
        // Whatever the page asks to send (Authorization, Mcp-Session-Id,
        // MCP-Protocol-Version, ...): only allowed origins get an answer.
        .allow_headers(AllowHeaders::mirror_request())
        .expose_headers([
            http::HeaderName::from_static("mcp-session-id"),
            http::HeaderName::from_static("mcp-protocol-version"),
            http::header::WWW_AUTHENTICATE,
        ])
        .max_age(Duration::from_secs(600))
}

/// A request's `Origin`: scheme, host and port (the scheme's default when
/// it names none).
#[derive(Debug, PartialEq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl Origin {
    fn parse(origin: &str) -> Option<Origin> {
        let uri = http::Uri::try_from(origin.trim()).ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let authority = uri.authority()?;
        let default = match scheme.as_str() {
            "http" => Some(80),
            "https" => Some(443),
            _ => None,
        };
        Some(Origin {
            host: authority
                .host()
                .trim_matches(['[', ']'])
                .to_ascii_lowercase(),
            port: authority.port_u16().or(default),
            scheme,
        })
    }
}

/// An entry of [`HttpOptions::allowed_origins`], read as rmcp reads it:
/// `scheme://host[:port]`, port `*` for any, no port for any (as rmcp
/// still accepts).
///
/// [`HttpOptions::allowed_origins`]: super::HttpOptions::allowed_origins
struct AllowedOrigin {
    origin: Origin,
    any_port: bool,
}

impl AllowedOrigin {
    fn parse(entry: &str) -> Option<AllowedOrigin> {
        let entry = entry.trim();
        let (base, star) = match entry.strip_suffix(":*") {
            Some(base) => (base, true),
            None => (entry, false),
        };
        let origin = Origin::parse(base)?;
        let names_port = http::Uri::try_from(base).ok()?.port_u16().is_some();
        Some(AllowedOrigin {
            any_port: star || !names_port,
            origin,
        })
    }

    fn admits(&self, origin: &Origin) -> bool {
        self.origin.scheme == origin.scheme
            && self.origin.host == origin.host
            && (self.any_port || self.origin.port == origin.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_origins_match_as_rmcp_matches_them() {
        let admits = |entry: &str, origin: &str| {
            AllowedOrigin::parse(entry)
                .unwrap()
                .admits(&Origin::parse(origin).unwrap())
        };
        assert!(admits("http://localhost:*", "http://localhost:5173"));
        assert!(admits("http://localhost:*", "http://LOCALHOST"));
        assert!(!admits("http://localhost:*", "https://localhost:5173"));
        assert!(!admits(
            "http://localhost:*",
            "http://localhost.evil.com:80"
        ));
        assert!(admits("http://[::1]:*", "http://[::1]:8080"));
        assert!(admits(
            "https://app.example.com",
            "https://app.example.com:8443"
        ));
        assert!(admits(
            "https://app.example.com:443",
            "https://app.example.com"
        ));
        assert!(!admits(
            "https://app.example.com:443",
            "https://app.example.com:444"
        ));
    }
}

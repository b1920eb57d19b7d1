//! The keys of a JWKS URL: fetched on first use over HTTPS, kept for a
//! max age, fetched again for a key id they lack (at most once per
//! interval), and kept through failed fetches.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use serde_json::Value;

use super::Config;
use super::verify::Key;
use crate::mcp::auth::Rejection;

/// A JWKS answer over this size is refused.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// How long one JWKS request may take, all told.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Keys fetched from a JWKS URL.
pub(super) struct KeySet {
    keys: Vec<Key>,
    fetched_at: Instant,
}

impl KeySet {
    pub(super) fn fitting(&self, alg: Algorithm, kid: Option<&str>) -> impl Iterator<Item = &Key> {
        self.keys.iter().filter(move |key| key.fits(alg, kid))
    }
}

/// A JWKS URL, the keys last fetched from it, and the fetching.
pub(super) struct RemoteKeys {
    pub(super) url: String,
    current: ArcSwapOption<KeySet>,
    /// Held while fetching: one fetch at a time.
    fetcher: tokio::sync::Mutex<Fetcher>,
}

#[derive(Default)]
struct Fetcher {
    /// When the URL was last asked, whatever the answer.
    last_attempt: Option<Instant>,
    /// Built on the first fetch: building may fail (no TLS roots, say).
    client: Option<reqwest::Client>,
}

impl RemoteKeys {
    pub(super) fn new(url: String) -> Self {
        RemoteKeys {
            url,
            current: ArcSwapOption::empty(),
            fetcher: tokio::sync::Mutex::new(Fetcher::default()),
        }
    }

    /// The keys to check a token with: fetched on first use, and again
    /// when they are older than the max age (then, while the fetch fails,
    /// the old ones).
    pub(super) async fn current(&self, config: &Config) -> Result<Arc<KeySet>, Rejection> {
        match self.current.load_full() {
            Some(keys) if keys.fetched_at.elapsed() < config.max_age => Ok(keys),
            Some(stale) => {
                // One request refreshes them; the others go on meanwhile.
                if let Ok(mut fetcher) = self.fetcher.try_lock() {
                    let _ = self.refresh(&mut fetcher, config.refetch_interval).await;
                }
                Ok(self.current.load_full().unwrap_or(stale))
            }
            None => {
                let mut fetcher = self.fetcher.lock().await;
                if let Some(keys) = self.current.load_full() {
                    return Ok(keys);
                }
                match self.refresh(&mut fetcher, config.refetch_interval).await {
                    Ok(Some(keys)) => Ok(keys),
                    Ok(None) | Err(()) => Err(unavailable()),
                }
            }
        }
    }

    /// Keys fetched after `seen`, for a token no key of `seen` fits: by
    /// another request meanwhile, or now if the refetch interval allows;
    /// `None` if it does not.
    pub(super) async fn refetch(
        &self,
        config: &Config,
        seen: &Arc<KeySet>,
    ) -> Result<Option<Arc<KeySet>>, Rejection> {
        let mut fetcher = self.fetcher.lock().await;
        if let Some(keys) = self.current.load_full()
            && !Arc::ptr_eq(&keys, seen)
        {
            return Ok(Some(keys));
        }
        self.refresh(&mut fetcher, config.refetch_interval)
            .await
            .map_err(|()| unavailable())
    }

    /// Fetches the keys unless the last attempt is within `interval`
    /// (then `None`); a failure is logged and keeps the keys there were.
    async fn refresh(
        &self,
        fetcher: &mut Fetcher,
        interval: Duration,
    ) -> Result<Option<Arc<KeySet>>, ()> {
        if fetcher
            .last_attempt
            .is_some_and(|last| last.elapsed() < interval)
        {
            return Ok(None);
        }
        fetcher.last_attempt = Some(Instant::now());
        match self.fetch(&mut fetcher.client).await {
            Ok(keys) => {
                tracing::debug!(url = %self.url, keys = keys.len(), "fetched the JWKS");
                let keys = Arc::new(KeySet {
                    keys,
                    fetched_at: Instant::now(),
                });
                self.current.store(Some(keys.clone()));
                Ok(Some(keys))
            }
            Err(error) => {
                tracing::warn!(
                    url = %self.url,
                    error = %Chain(&error),
                    "cannot fetch the JWKS; the keys fetched before, if any, stay in use"
                );
                Err(())
            }
        }
    }

    async fn fetch(&self, client: &mut Option<reqwest::Client>) -> Result<Vec<Key>, FetchError> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| FetchError::Url(Box::new(e)))?;
        if !secure(&url) {
            return Err(FetchError::Insecure);
        }
        let client = match client {
            Some(client) => client,
            None => client.insert(jwks_client()?),
        };
        let mut response = client
            .get(url)
            .header(http::header::ACCEPT, "application/json")
            .send()
            .await?;
        if !response.status().is_success() {
            return Err(FetchError::Status(response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_JWKS_BYTES {
                return Err(FetchError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        #[derive(serde::Deserialize)]
        struct Document {
            keys: Vec<Value>,
        }
        let document: Document = serde_json::from_slice(&body)?;
        let keys: Vec<Key> = document
            .keys
            .into_iter()
            .filter_map(|key| {
                let jwk: Jwk = serde_json::from_value(key).ok()?;
                // A symmetric key published at a URL is no secret.
                if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_)) {
                    return None;
                }
                Key::from_jwk(&jwk).ok()
            })
            .collect();
        if keys.is_empty() {
            return Err(FetchError::NoKeys);
        }
        Ok(keys)
    }
}

/// The HTTP client of JWKS fetches: redirects only to secure URLs, a
/// bounded time.
fn jwks_client() -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() >= 5 {
                attempt.error("too many redirects")
            } else if secure(attempt.url()) {
                attempt.follow()
            } else {
                attempt.error("redirected to a plain http URL")
            }
        }))
        .build()
        .map_err(FetchError::Client)
}

/// `https`, or plain `http` to loopback.
fn secure(url: &reqwest::Url) -> bool {
    match (url.scheme(), url.host_str()) {
        ("https", _) => true,
        ("http", Some(host)) => {
            host == "localhost"
                || host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
        _ => false,
    }
}

/// The answer to a request whose token cannot be checked for want of keys.
fn unavailable() -> Rejection {
    Rejection::new(
        http::StatusCode::SERVICE_UNAVAILABLE,
        "the keys to check the token with cannot be fetched from the authorization server; \
         try again later",
    )
}

/// Why the JWKS could not be fetched.
#[derive(Debug, thiserror::Error)]
enum FetchError {
    #[error("the JWKS URL is not a URL")]
    Url(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("the JWKS URL must be https (plain http only on loopback)")]
    Insecure,
    #[error("cannot build the HTTP client")]
    Client(#[source] reqwest::Error),
    #[error("the request failed")]
    Request(#[from] reqwest::Error),
    #[error("the answer is {0}")]
    Status(http::StatusCode),
    #[error("the answer is over {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    #[error("the answer is not a JWKS")]
    Json(#[from] serde_json::Error),
    #[error("the JWKS has no key that verifies signatures")]
    NoKeys,
}

/// An error and its sources, for the log.
struct Chain<'e>(&'e dyn std::error::Error);

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_for_loopback_only() {
        let secure = |url: &str| secure(&reqwest::Url::parse(url).unwrap());
        assert!(secure("https://login.example.com/jwks"));
        assert!(secure("http://127.0.0.1:8080/jwks"));
        assert!(secure("http://[::1]/jwks"));
        assert!(secure("http://localhost/jwks"));
        assert!(!secure("http://login.example.com/jwks"));
        assert!(!secure("http://10.0.0.1/jwks"));
        assert!(!secure("ftp://127.0.0.1/jwks"));
    }

    #[test]
    fn the_jwks_client_builds_with_tls() {
        jwks_client().unwrap();
    }
}

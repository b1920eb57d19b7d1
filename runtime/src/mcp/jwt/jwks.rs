//! The keys of a JWKS URL: fetched on first use over HTTPS, kept for a
//! max age, fetched again for a key id they lack (at most once per
//! interval), and kept through failed fetches.
//!
//! One fetch at a time, in a task of its own: requests that need keys
//! while it runs wait for it and share its outcome, and one that gives up
//! does not cancel it for the others.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use jsonwebtoken::Algorithm;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use serde_json::Value;
use tokio::sync::watch;

use super::Config;
use super::unknown_kids::UnknownKids;
use super::verify::Key;
use crate::mcp::auth::Rejection;

/// A JWKS answer over this size is refused.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// A key id a fresh fetch did not contain is refused without another
/// fetch for this many refetch intervals.
const UNKNOWN_KID_INTERVALS: u32 = 6;

/// Keys fetched from a JWKS URL.
pub(super) struct KeySet {
    keys: Vec<Key>,
    fetched_at: Instant,
}

impl KeySet {
    pub(super) fn fitting(&self, alg: Algorithm, kid: Option<&str>) -> impl Iterator<Item = &Key> {
        self.keys.iter().filter(move |key| key.fits(alg, kid))
    }

    fn has_kid(&self, kid: &str) -> bool {
        self.keys.iter().any(|key| key.kid.as_deref() == Some(kid))
    }
}

/// What a fetch ends with: the keys, or a failure (logged by the fetch).
type Outcome = Result<Arc<KeySet>, ()>;

/// A fetch under way: its outcome once it is known.
type Flight = watch::Receiver<Option<Outcome>>;

/// A JWKS URL, the keys last fetched from it, and the fetching.
pub(super) struct RemoteKeys {
    pub(super) url: String,
    current: ArcSwapOption<KeySet>,
    state: Mutex<FetchState>,
    /// Built on the first fetch: building may fail (no TLS roots, say).
    client: OnceLock<reqwest::Client>,
}

#[derive(Default)]
struct FetchState {
    /// When a fetch last started, whatever its answer.
    last_attempt: Option<Instant>,
    /// The fetch under way, if one is.
    in_flight: Option<Flight>,
    unknown_kids: UnknownKids,
}

impl RemoteKeys {
    pub(super) fn new(url: String) -> Self {
        RemoteKeys {
            url,
            current: ArcSwapOption::empty(),
            state: Mutex::default(),
            client: OnceLock::new(),
        }
    }

    /// The keys to check a token with: fetched on first use, and again
    /// when they are older than the max age (then the old ones are used
    /// while the fetch runs, and after it if it fails).
    pub(super) async fn current(
        self: &Arc<Self>,
        config: &Config,
    ) -> Result<Arc<KeySet>, Rejection> {
        if let Some(keys) = self.current.load_full() {
            if keys.fetched_at.elapsed() >= config.max_age {
                self.join_or_start(self.state(), config);
            }
            return Ok(keys);
        }
        let flight = {
            let state = self.state();
            // A fetch may have ended since the keys were looked at.
            if let Some(keys) = self.current.load_full() {
                return Ok(keys);
            }
            self.join_or_start(state, config)
        };
        match flight {
            Some(flight) => outcome(flight).await.map_err(|()| unavailable()),
            None => Err(unavailable()),
        }
    }

    /// Keys fetched after `seen`, for a token naming `kid` that no key of
    /// `seen` fits: by a fetch under way or one that ended meanwhile, or
    /// by one started now if the refetch interval allows; `None` if it does
    /// not, or if a fresh fetch lately showed `kid` to be unknown.
    pub(super) async fn refetch(
        self: &Arc<Self>,
        config: &Config,
        seen: &Arc<KeySet>,
        kid: Option<&str>,
    ) -> Result<Option<Arc<KeySet>>, Rejection> {
        let flight = {
            let state = self.state();
            if let Some(keys) = self.current.load_full()
                && !Arc::ptr_eq(&keys, seen)
            {
                return Ok(Some(keys));
            }
            if kid.is_some_and(|kid| state.unknown_kids.contains(kid, Instant::now())) {
                return Ok(None);
            }
            match self.join_or_start(state, config) {
                Some(flight) => flight,
                None => return Ok(None),
            }
        };
        let keys = outcome(flight).await.map_err(|()| unavailable())?;
        if let Some(kid) = kid
            && !keys.has_kid(kid)
        {
            let now = Instant::now();
            // An interval too long to add up never lets a fetch happen again anyway.
            let until = config
                .refetch_interval
                .checked_mul(UNKNOWN_KID_INTERVALS)
                .and_then(|remembered| now.checked_add(remembered));
            if let Some(until) = until {
                self.state().unknown_kids.insert(kid, until, now);
            }
        }
        Ok(Some(keys))
    }

    fn state(&self) -> MutexGuard<'_, FetchState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fetch under way, or one started now unless the last started
    /// within the refetch interval (then `None`). Takes the lock on the
    /// state, to let it go before the fetch's task exists.
    fn join_or_start(
        self: &Arc<Self>,
        mut state: MutexGuard<'_, FetchState>,
        config: &Config,
    ) -> Option<Flight> {
        if let Some(flight) = &state.in_flight {
            return Some(flight.clone());
        }
        if state
            .last_attempt
            .is_some_and(|last| last.elapsed() < config.refetch_interval)
        {
            return None;
        }
        state.last_attempt = Some(Instant::now());
        let (sender, flight) = watch::channel(None);
        state.in_flight = Some(flight.clone());
        drop(state);
        let task = FetchTask {
            remote: self.clone(),
            sender,
            outcome: Err(()),
        };
        tokio::spawn(task.run(config.fetch_timeout()));
        Some(flight)
    }
}

/// The outcome of `flight`, once it is known.
async fn outcome(mut flight: Flight) -> Outcome {
    match flight.wait_for(Option::is_some).await {
        Ok(outcome) => outcome.clone().unwrap_or(Err(())),
        // The fetch ends by publishing, even when it panics: not reached.
        Err(_) => Err(()),
    }
}

/// A fetch in its own task. Dropped, however the task ends, it clears the
/// fetch under way and hands its waiters the outcome: a failure unless
/// the fetch got to set another.
struct FetchTask {
    remote: Arc<RemoteKeys>,
    sender: watch::Sender<Option<Outcome>>,
    outcome: Outcome,
}

impl FetchTask {
    /// Fetches the keys, in at most `timeout`; a failure is logged and
    /// keeps the keys there were.
    async fn run(mut self, timeout: Duration) {
        let remote = &self.remote;
        let fetched = match tokio::time::timeout(timeout, remote.fetch()).await {
            Ok(fetched) => fetched,
            Err(_) => Err(FetchError::TimedOut(timeout)),
        };
        self.outcome = match fetched {
            Ok(fetched) => {
                tracing::debug!(url = %remote.url, keys = fetched.len(), "fetched the JWKS");
                let keys = Arc::new(KeySet {
                    keys: fetched,
                    fetched_at: Instant::now(),
                });
                remote.current.store(Some(keys.clone()));
                Ok(keys)
            }
            Err(error) => {
                tracing::warn!(
                    url = %remote.url,
                    error = %Chain(&error),
                    "cannot fetch the JWKS; the keys fetched before, if any, stay in use"
                );
                Err(())
            }
        };
    }
}

impl Drop for FetchTask {
    fn drop(&mut self) {
        // The keys were stored first: a request that finds no fetch under
        // way finds them.
        self.remote.state().in_flight = None;
        self.sender.send_replace(Some(self.outcome.clone()));
    }
}

impl RemoteKeys {
    /// Asks the URL for its keys, with no bound on the time it takes.
    async fn fetch(&self) -> Result<Vec<Key>, FetchError> {
        let url = reqwest::Url::parse(&self.url).map_err(|e| FetchError::Url(Box::new(e)))?;
        if !secure(&url) {
            return Err(FetchError::Insecure);
        }
        let client = match self.client.get() {
            Some(client) => client,
            None => {
                let built = jwks_client()?;
                // One fetch at a time: nobody else builds one meanwhile.
                self.client.get_or_init(|| built)
            }
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

/// The HTTP client of JWKS fetches: redirects only to secure URLs. Each
/// fetch is bounded by the fetch timeout around it.
fn jwks_client() -> Result<reqwest::Client, FetchError> {
    reqwest::Client::builder()
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
    #[error("no answer within {0:?}")]
    TimedOut(Duration),
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
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpListener;
    use tokio::sync::Notify;

    use super::*;
    use crate::mcp::ResourceMetadata;
    use crate::mcp::jwt::JwtAuth;

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

    /// A JWKS endpoint on loopback that answers once `release` is
    /// notified, counting the connections it gets.
    async fn held_jwks(release: Arc<Notify>, hits: Arc<AtomicUsize>) -> String {
        const JWKS: &str = r#"{"keys": [{
            "kty": "EC", "crv": "P-256", "kid": "2025-01", "alg": "ES256", "use": "sig",
            "x": "rgnOPvetY8Q5mQrdTu2eJaTTUQ-JG035G6jfT3rLvmM",
            "y": "wqa8GipX7RJDGsFqLZBpIkOCg9d8td8dShkaXt8GZ9g"
        }]}"#;
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/jwks.json", listener.local_addr().unwrap());
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                hits.fetch_add(1, Ordering::SeqCst);
                let release = release.clone();
                tokio::spawn(async move {
                    let mut request = [0; 4096];
                    let _ = stream.read(&mut request).await;
                    release.notified().await;
                    let response = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{JWKS}",
                        JWKS.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                });
            }
        });
        url
    }

    #[tokio::test]
    async fn a_waiter_that_gives_up_does_not_cancel_the_fetch_for_the_others() {
        let (release, hits) = (Arc::new(Notify::new()), Arc::new(AtomicUsize::new(0)));
        let url = held_jwks(release.clone(), hits.clone()).await;
        let metadata = ResourceMetadata::new(
            "https://tools.example.com/mcp",
            ["https://login.example.com"],
        );
        let config = JwtAuth::new(metadata, "https://login.example.com")
            .jwks_url(url)
            .config;
        let remote = config.remote.clone().unwrap();

        let first = tokio::spawn({
            let (config, remote) = (config.clone(), remote.clone());
            async move { remote.current(&config).await.is_ok() }
        });
        while hits.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The first request gives up (its client went away) mid-fetch.
        first.abort();
        release.notify_one();

        // Within the refetch interval: these are the keys of that fetch.
        assert!(remote.current(&config).await.is_ok());
        assert_eq!(hits.load(Ordering::SeqCst), 1);
    }
}

//! An OAuth 2.1 resource server for the Streamable HTTP endpoint:
//! [`JwtAuth`] checks JWT access tokens (signature, issuer, audience,
//! lifetime, scopes) with keys from a JWKS URL or given ones, and hands the
//! application's context function the [`Claims`] it found.

mod claims;
mod jwks;
mod unknown_kids;
mod verify;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey};

pub use claims::Claims;
use jwks::RemoteKeys;
use verify::Key;

use super::auth::{Authenticate, Rejection, ResourceMetadata, bearer_token};

const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
const DEFAULT_REFETCH_INTERVAL: Duration = Duration::from_secs(10);
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(10 * 60);
const DEFAULT_FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The least fetch timeout the refetch interval caps it at.
const MIN_FETCH_TIMEOUT: Duration = Duration::from_secs(1);

/// The asymmetric algorithms accepted unless [`JwtAuth::algorithms`] says
/// otherwise.
const ASYMMETRIC: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The context function of a [`JwtAuth`] that has none: the claims
/// themselves.
type ClaimsAsContext = fn(&Claims) -> Result<Claims, Rejection>;

/// Protects the Streamable HTTP endpoint as an OAuth 2.1 resource server:
/// every request must carry `Authorization: Bearer <jwt>`, an access token
/// signed by the authorization server, issued for this endpoint, not
/// expired, and holding the required scopes.
///
/// Give it to [`McpServer::http_router`](crate::mcp::McpServer::http_router)
/// or [`serve_http`](crate::mcp::McpServer::serve_http): it serves the
/// endpoint's [`ResourceMetadata`] at the well-known URL and turns each
/// token's [`Claims`] into the caller's context with the function given to
/// [`context`](JwtAuth::context) (without one, the context is the
/// [`Claims`]).
///
/// ```
/// use toolwright::mcp::{HttpOptions, JwtAuth, McpServer, Rejection, ResourceMetadata};
/// use toolwright::{Catalog, Container, Executor, Principal};
///
/// #[derive(Clone)]
/// struct User { id: String, may_write: bool }
///
/// impl Principal for User {
///     fn id(&self) -> &str { &self.id }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"])
///     .name("Example tools");
/// let auth = JwtAuth::new(metadata, "https://login.example.com")
///     .jwks_url("https://login.example.com/.well-known/jwks.json")
///     .required_scopes(["tools:read"])
///     .context(|claims| {
///         let id = claims.sub.clone().ok_or_else(|| Rejection::invalid_token("the token names no subject"))?;
///         Ok(User { id, may_write: claims.has_scope("tools:write") })
///     });
///
/// # let catalog = Catalog::builder().build()?;
/// // Sessions belong to the user, not to one token (see below).
/// let executor = Executor::builder(catalog, Container::default()).principal::<User>().build()?;
/// let server = McpServer::<User>::new(executor, "tools", "1.0.0");
/// let router = server.http_router(auth, HttpOptions::default().allowed_hosts(["tools.example.com"]));
/// # let _ = router;
/// # Ok(())
/// # }
/// ```
///
/// # What MCP clients then do
///
/// An MCP client that speaks MCP's authorization rules (MCP Inspector,
/// Claude, VS Code) finds its way on its own:
///
/// 1. Its first request, without a token, is answered 401 with
///    `WWW-Authenticate: Bearer resource_metadata="https://tools.example.com/.well-known/oauth-protected-resource/mcp"`.
/// 2. It reads that document (RFC 9728): `authorization_servers` names the
///    issuer, whose own metadata (RFC 8414 or OpenID Connect discovery)
///    names its endpoints.
/// 3. It signs the person in with the authorization-code flow and PKCE
///    (registering itself first if the server allows dynamic client
///    registration), asking for a token for `resource=https://tools.example.com/mcp`
///    (RFC 8707): the token's `aud` then names this endpoint.
/// 4. It sends `Authorization: Bearer <token>` on every request. An expired
///    or refused token is answered 401 with `error="invalid_token"` and the
///    client refreshes it or signs in again; a token without a required
///    scope is answered 403 with `error="insufficient_scope"` and the
///    scopes to ask for.
///
/// At the authorization server, register the endpoint (an "API" or
/// "resource") with its URL as the audience, or name the audience it uses
/// with [`audiences`](JwtAuth::audiences).
///
/// A session belongs to whoever opened it. Implement
/// [`Principal`](crate::Principal) on the context, its id the token's
/// subject, and name it with
/// [`ExecutorBuilder::principal`](crate::executor::ExecutorBuilder::principal), as
/// above: the session is then the user's and goes on when the client
/// refreshes its token. Without it the session belongs to the token, and
/// a refreshed one gets 404 for it and starts a new session.
///
/// # What is checked
///
/// - The signature, with the key whose `kid` the token names: keys come
///   from [`jwks_url`](JwtAuth::jwks_url), [`jwks`](JwtAuth::jwks) or
///   [`key`](JwtAuth::key). Keys the token itself points at (`jku`, `x5u`,
///   `jwk`) are never used.
/// - The algorithm: one of [`algorithms`](JwtAuth::algorithms), asymmetric
///   (RSA, ECDSA, EdDSA) by default. `alg: none` is never accepted, and an
///   HMAC algorithm only with a shared secret given as a key: never with a
///   public key, the classic confusion attack.
/// - `iss` is the issuer, `aud` names an audience (by default the resource
///   URL of the metadata), `exp` is not past and `nbf` not ahead, each
///   within the [`leeway`](JwtAuth::leeway) (60 s).
/// - The [`required_scopes`](JwtAuth::required_scopes), from the `scope`
///   claim (a space-separated string) or `scp` (an array, or a string).
///
/// A refusal says why in the challenge's `error_description` (`the token
/// has expired`), never quoting the token.
pub struct JwtAuth<F = ClaimsAsContext> {
    config: Arc<Config>,
    context: F,
}

/// What a [`JwtAuth`] checks tokens against.
#[derive(Clone)]
struct Config {
    metadata: ResourceMetadata,
    issuer: String,
    /// Empty: the metadata's resource.
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    leeway: Duration,
    required_scopes: Vec<String>,
    /// Keys given by the application.
    keys: Vec<Key>,
    /// Keys fetched from a JWKS URL.
    remote: Option<Arc<RemoteKeys>>,
    refetch_interval: Duration,
    max_age: Duration,
    fetch_timeout: Duration,
}

impl Config {
    /// The time a JWKS fetch may take: the one set, but at most half the
    /// refetch interval (and never under a second), so that a fetch ends
    /// before the next may start.
    fn fetch_timeout(&self) -> Duration {
        self.fetch_timeout
            .min((self.refetch_interval / 2).max(MIN_FETCH_TIMEOUT))
    }

    fn audiences(&self) -> &[String] {
        if self.audiences.is_empty() {
            std::slice::from_ref(&self.metadata.resource)
        } else {
            &self.audiences
        }
    }
}

impl<F: Clone> Clone for JwtAuth<F> {
    fn clone(&self) -> Self {
        JwtAuth {
            config: self.config.clone(),
            context: self.context.clone(),
        }
    }
}

impl<F> fmt::Debug for JwtAuth<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let config = &*self.config;
        f.debug_struct("JwtAuth")
            .field("resource", &config.metadata.resource)
            .field("issuer", &config.issuer)
            .field("audiences", &config.audiences())
            .field("algorithms", &config.algorithms)
            .field("leeway", &config.leeway)
            .field("required_scopes", &config.required_scopes)
            .field("keys", &config.keys.len())
            .field("jwks_url", &config.remote.as_ref().map(|r| &r.url))
            .field("jwks_fetch_timeout", &config.fetch_timeout())
            .finish_non_exhaustive()
    }
}

impl JwtAuth {
    /// Checks tokens issued by `issuer` (their `iss`, exactly) for the
    /// endpoint `metadata` describes; the issuer is added to the
    /// metadata's authorization servers if it is not there.
    ///
    /// Give it keys next, with [`jwks_url`](JwtAuth::jwks_url),
    /// [`jwks`](JwtAuth::jwks) or [`key`](JwtAuth::key): without any, every
    /// token is refused.
    ///
    /// ```
    /// use toolwright::mcp::{Authenticate, JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", Vec::<String>::new());
    /// let auth = JwtAuth::new(metadata, "https://login.example.com");
    /// let served = auth.resource_metadata().unwrap();
    /// assert_eq!(served.authorization_servers, ["https://login.example.com"]);
    /// ```
    pub fn new(metadata: ResourceMetadata, issuer: impl Into<String>) -> Self {
        let issuer = issuer.into();
        let mut metadata = metadata;
        if !metadata.authorization_servers.contains(&issuer) {
            metadata.authorization_servers.push(issuer.clone());
        }
        use_rust_crypto();
        JwtAuth {
            config: Arc::new(Config {
                metadata,
                issuer,
                audiences: Vec::new(),
                algorithms: ASYMMETRIC.to_vec(),
                leeway: DEFAULT_LEEWAY,
                required_scopes: Vec::new(),
                keys: Vec::new(),
                remote: None,
                refetch_interval: DEFAULT_REFETCH_INTERVAL,
                max_age: DEFAULT_MAX_AGE,
                fetch_timeout: DEFAULT_FETCH_TIMEOUT,
            }),
            context: claims_as_context,
        }
    }
}

impl<F> JwtAuth<F> {
    fn config_mut(&mut self) -> &mut Config {
        Arc::make_mut(&mut self.config)
    }

    /// Fetches the verification keys from the authorization server's JWKS
    /// URL (its `jwks_uri`), on the first request that needs them.
    ///
    /// The keys are kept for [`jwks_max_age`](JwtAuth::jwks_max_age), and
    /// fetched again at once when a token names a key id (`kid`) they do
    /// not have, so that a key rotation is picked up; but at most once per
    /// [`jwks_refetch_interval`](JwtAuth::jwks_refetch_interval), so that
    /// tokens naming made-up keys cannot make the server hammer the
    /// authorization server. A key id a fetch just showed to be unknown is
    /// refused without another fetch for six refetch intervals (the last
    /// 64 such ids are remembered). A fetch that fails, or takes longer
    /// than [`jwks_fetch_timeout`](JwtAuth::jwks_fetch_timeout), keeps the
    /// last keys that were fetched; while none ever were, requests are
    /// answered 503.
    ///
    /// There is one fetch at a time: requests that need keys while it runs
    /// wait for that one and share its outcome, however many there are.
    ///
    /// The URL must be `https`, except on loopback (`http://127.0.0.1`,
    /// `http://localhost`), where plain `http` serves tests.
    ///
    /// ```
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// // Nothing is fetched yet.
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .jwks_url("https://login.example.com/.well-known/jwks.json");
    /// # let _ = auth;
    /// ```
    pub fn jwks_url(mut self, url: impl Into<String>) -> Self {
        self.config_mut().remote = Some(Arc::new(RemoteKeys::new(url.into())));
        self
    }

    /// Adds the keys of a JWKS document, given rather than fetched (a key
    /// set the application ships, or tests). Keys meant for encryption,
    /// or of a kind `jsonwebtoken` does not verify with, are skipped with a
    /// warning.
    ///
    /// ```
    /// use toolwright::mcp::jsonwebtoken::jwk::JwkSet;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let jwks: JwkSet = serde_json::from_str(r#"{"keys": [{
    ///     "kty": "EC", "crv": "P-256", "kid": "2025-01", "alg": "ES256", "use": "sig",
    ///     "x": "rgnOPvetY8Q5mQrdTu2eJaTTUQ-JG035G6jfT3rLvmM",
    ///     "y": "wqa8GipX7RJDGsFqLZBpIkOCg9d8td8dShkaXt8GZ9g"
    /// }]}"#).unwrap();
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com").jwks(jwks);
    /// # let _ = auth;
    /// ```
    pub fn jwks(mut self, jwks: JwkSet) -> Self {
        let keys = jwks.keys.iter().filter_map(|jwk| match Key::from_jwk(jwk) {
            Ok(key) => Some(key),
            Err(why) => {
                tracing::warn!(kid = ?jwk.common.key_id, "a given JWK is skipped: {why}");
                None
            }
        });
        self.config_mut().keys.extend(keys);
        self
    }

    /// Adds one key, used for every token whose algorithm is of the key's
    /// kind, whatever `kid` it names: a public key as PEM or DER, or, for
    /// an HMAC algorithm allowed with [`algorithms`](JwtAuth::algorithms),
    /// the shared secret.
    ///
    /// PEM needs `jsonwebtoken`'s `use_pem` feature: add
    /// `jsonwebtoken = { version = "12", features = ["use_pem"] }` to the
    /// application's dependencies.
    ///
    /// ```
    /// use toolwright::mcp::jsonwebtoken::DecodingKey;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let public_key = DecodingKey::from_ec_components(
    ///     "rgnOPvetY8Q5mQrdTu2eJaTTUQ-JG035G6jfT3rLvmM",
    ///     "wqa8GipX7RJDGsFqLZBpIkOCg9d8td8dShkaXt8GZ9g",
    /// ).unwrap();
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com").key(public_key);
    /// # let _ = auth;
    /// ```
    pub fn key(mut self, key: DecodingKey) -> Self {
        self.config_mut().keys.push(Key {
            kid: None,
            alg: None,
            key,
        });
        self
    }

    /// The audiences a token's `aud` must name one of, instead of the
    /// metadata's resource URL: for an authorization server that names
    /// the endpoint otherwise (an API identifier, say). Empty restores the
    /// resource URL.
    ///
    /// ```
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .audiences(["https://tools.example.com/mcp", "api://tools"]);
    /// # let _ = auth;
    /// ```
    pub fn audiences(mut self, audiences: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.config_mut().audiences = audiences.into_iter().map(Into::into).collect();
        self
    }

    /// The signing algorithms accepted; by default the asymmetric ones
    /// (`RS256`, `RS384`, `RS512`, `PS256`, `PS384`, `PS512`, `ES256`,
    /// `ES384`, `EdDSA`). Name only those the authorization server uses.
    ///
    /// An HMAC algorithm (`HS256`) verifies only with a secret given with
    /// [`key`](JwtAuth::key) or as an `oct` key of [`jwks`](JwtAuth::jwks),
    /// never with a public key nor with a key fetched from a JWKS URL,
    /// whose keys are public.
    ///
    /// ```
    /// use toolwright::mcp::jsonwebtoken::Algorithm;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .algorithms([Algorithm::RS256]);
    /// # let _ = auth;
    /// ```
    pub fn algorithms(mut self, algorithms: impl IntoIterator<Item = Algorithm>) -> Self {
        self.config_mut().algorithms = algorithms.into_iter().collect();
        self
    }

    /// How far the server's clock may be from the issuer's when `exp`
    /// and `nbf` are checked, in whole seconds (default 60 s).
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com").leeway(Duration::from_secs(5));
    /// # let _ = auth;
    /// ```
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.config_mut().leeway = leeway;
        self
    }

    /// Scopes every token must hold; one without them is answered 403
    /// `insufficient_scope`, naming them all for the client to ask for.
    /// They are added to the metadata's `scopes_supported`.
    ///
    /// ```
    /// use toolwright::mcp::{Authenticate, JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com").required_scopes(["tools:read"]);
    /// assert_eq!(auth.resource_metadata().unwrap().scopes_supported, ["tools:read"]);
    /// ```
    pub fn required_scopes(mut self, scopes: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let config = self.config_mut();
        config.required_scopes = scopes.into_iter().map(Into::into).collect();
        for scope in &config.required_scopes {
            if !config.metadata.scopes_supported.contains(scope) {
                config.metadata.scopes_supported.push(scope.clone());
            }
        }
        self
    }

    /// The least time between two fetches of the JWKS URL (default 10 s):
    /// a token naming an unknown key within it is refused without a fetch.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .jwks_url("https://login.example.com/.well-known/jwks.json")
    ///     .jwks_refetch_interval(Duration::from_secs(60));
    /// # let _ = auth;
    /// ```
    pub fn jwks_refetch_interval(mut self, interval: Duration) -> Self {
        self.config_mut().refetch_interval = interval;
        self
    }

    /// How long fetched keys are used before they are fetched again
    /// (default 10 min), so that a key the issuer withdrew stops verifying.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .jwks_url("https://login.example.com/.well-known/jwks.json")
    ///     .jwks_max_age(Duration::from_secs(3600));
    /// # let _ = auth;
    /// ```
    pub fn jwks_max_age(mut self, max_age: Duration) -> Self {
        self.config_mut().max_age = max_age;
        self
    }

    /// How long one fetch of the JWKS URL may take, all told (default
    /// 5 s), but at most half the
    /// [`jwks_refetch_interval`](JwtAuth::jwks_refetch_interval) (and
    /// never under 1 s), so that a fetch ends before the next may start.
    /// The requests waiting for keys are answered when it ends: 503 if the
    /// authorization server did not answer in time and there were no keys
    /// yet.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .jwks_url("https://login.example.com/.well-known/jwks.json")
    ///     .jwks_fetch_timeout(Duration::from_secs(2));
    /// # let _ = auth;
    /// ```
    pub fn jwks_fetch_timeout(mut self, timeout: Duration) -> Self {
        self.config_mut().fetch_timeout = timeout;
        self
    }

    /// Turns each valid token's claims into the caller's context `C`, or
    /// refuses the request: a [`Rejection::forbidden`] for a valid token of
    /// someone who may not use the server, say.
    ///
    /// ```
    /// use toolwright::mcp::{Authenticate, JwtAuth, Rejection, ResourceMetadata};
    ///
    /// #[derive(Clone)]
    /// struct Caller { id: String, admin: bool }
    ///
    /// fn takes<C>(_: impl Authenticate<C>) {}
    ///
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com").context(|claims| {
    ///     if claims.raw["email_verified"] != true {
    ///         return Err(Rejection::forbidden());
    ///     }
    ///     Ok(Caller {
    ///         id: claims.sub.clone().unwrap_or_default(),
    ///         admin: claims.has_scope("tools:admin"),
    ///     })
    /// });
    /// takes::<Caller>(auth);
    /// ```
    pub fn context<C, G>(self, context: G) -> JwtAuth<G>
    where
        G: Fn(&Claims) -> Result<C, Rejection> + Clone + Send + Sync + 'static,
    {
        JwtAuth {
            config: self.config,
            context,
        }
    }
}

impl<C, F> Authenticate<C> for JwtAuth<F>
where
    F: Fn(&Claims) -> Result<C, Rejection> + Clone + Send + Sync + 'static,
    C: Send,
{
    async fn authenticate(&self, parts: &http::request::Parts) -> Result<C, Rejection> {
        let token = bearer_token(&parts.headers).ok_or_else(Rejection::unauthorized)?;
        let claims = self.validate(token).await?;
        (self.context)(&claims)
    }

    fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        Some(&self.config.metadata)
    }
}

fn claims_as_context(claims: &Claims) -> Result<Claims, Rejection> {
    Ok(claims.clone())
}

/// Makes sure `jsonwebtoken` has a crypto provider: it has one by itself
/// unless another crate turned on its other backend too, and then it
/// would panic on the first token.
fn use_rust_crypto() {
    use jsonwebtoken::crypto::{CryptoProvider, rust_crypto};
    if CryptoProvider::try_get_default().is_none() {
        // Another thread may have installed one meanwhile: either will do.
        let _ = rust_crypto::DEFAULT_PROVIDER.install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth() -> JwtAuth {
        let metadata = ResourceMetadata::new(
            "https://tools.example.com/mcp",
            ["https://login.example.com"],
        );
        JwtAuth::new(metadata, "https://login.example.com")
    }

    #[test]
    fn the_fetch_timeout_is_5_s_by_default_half_the_default_refetch_interval() {
        assert_eq!(auth().config.fetch_timeout(), Duration::from_secs(5));
    }

    #[test]
    fn the_fetch_timeout_set_applies_below_half_the_refetch_interval() {
        let auth = auth().jwks_fetch_timeout(Duration::from_millis(1500));
        assert_eq!(auth.config.fetch_timeout(), Duration::from_millis(1500));
    }

    #[test]
    fn the_fetch_timeout_is_capped_at_half_the_refetch_interval() {
        let auth = auth()
            .jwks_fetch_timeout(Duration::from_secs(3600))
            .jwks_refetch_interval(Duration::from_secs(60));
        assert_eq!(auth.config.fetch_timeout(), Duration::from_secs(30));
    }

    #[test]
    fn a_short_refetch_interval_caps_the_fetch_timeout_at_1_s() {
        let auth = auth().jwks_refetch_interval(Duration::ZERO);
        assert_eq!(auth.config.fetch_timeout(), Duration::from_secs(1));
        let auth = auth.jwks_fetch_timeout(Duration::from_millis(200));
        assert_eq!(auth.config.fetch_timeout(), Duration::from_millis(200));
    }
}

//! An OAuth 2.1 resource server for the Streamable HTTP endpoint:
//! [`JwtAuth`] checks JWT access tokens (signature, issuer, audience,
//! lifetime, scopes) with keys from a JWKS URL or given ones, and hands the
//! application's context function the [`Claims`] it found.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk, JwkSet, KeyOperations, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::auth::{Authenticate, Rejection, ResourceMetadata, bearer_token};

/// Longer bearer tokens are refused unread: real access tokens are a few
/// kilobytes at most.
const MAX_TOKEN_BYTES: usize = 16 * 1024;
/// A JWKS answer over this size is refused.
const MAX_JWKS_BYTES: usize = 1024 * 1024;
/// How long one JWKS request may take, all told.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);
const DEFAULT_REFETCH_INTERVAL: Duration = Duration::from_secs(10);
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(10 * 60);

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
/// [`ExecutorBuilder::principal`](crate::ExecutorBuilder::principal), as
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
    /// authorization server. A fetch that fails keeps the last keys that
    /// were fetched; while none ever were, requests are answered 503.
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

    /// Checks `token` (the part after `Bearer `) and returns its claims,
    /// or why it is refused: for an [`Authenticate`] of your own that
    /// goes on to look the caller up, say.
    ///
    /// ```
    /// use toolwright::mcp::jsonwebtoken::jwk::JwkSet;
    /// use toolwright::mcp::{JwtAuth, ResourceMetadata};
    /// # use toolwright::mcp::jsonwebtoken::{encode, Algorithm, EncodingKey, Header};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let jwks: JwkSet = serde_json::from_str(r#"{"keys": [{
    ///     "kty": "EC", "crv": "P-256", "kid": "2025-01", "alg": "ES256",
    ///     "x": "rgnOPvetY8Q5mQrdTu2eJaTTUQ-JG035G6jfT3rLvmM",
    ///     "y": "wqa8GipX7RJDGsFqLZBpIkOCg9d8td8dShkaXt8GZ9g"
    /// }]}"#).unwrap();
    /// let metadata = ResourceMetadata::new("https://tools.example.com/mcp", ["https://login.example.com"]);
    /// let auth = JwtAuth::new(metadata, "https://login.example.com")
    ///     .jwks(jwks)
    ///     .required_scopes(["tools:read"]);
    ///
    /// // A token as the authorization server issues it (signed here with the
    /// // private half of the key above, a key for this example only).
    /// # let signing_key = EncodingKey::from_ec_pem(b"-----BEGIN PRIVATE KEY-----
    /// # MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgmZ4VQvVmLxv33zTx
    /// # tCyr0fe7ZWREf0Dz+DnY00mAy5OhRANCAASuCc4+961jxDmZCt1O7Z4lpNNRD4kb
    /// # TfkbqN9Pesu+Y8KmvBoqV+0SQxrBai2QaSJDgoPXfLXfHUoZGl7fBmfY
    /// # -----END PRIVATE KEY-----").unwrap();
    /// # let sign = |claims: serde_json::Value| {
    /// #     let mut header = Header::new(Algorithm::ES256);
    /// #     header.kid = Some("2025-01".to_owned());
    /// #     encode(&header, &claims, &signing_key).unwrap()
    /// # };
    /// # let in_an_hour = toolwright::mcp::jsonwebtoken::get_current_timestamp() + 3600;
    /// let token = sign(serde_json::json!({
    ///     "iss": "https://login.example.com",
    ///     "aud": "https://tools.example.com/mcp",
    ///     "sub": "alice",
    ///     "scope": "tools:read tools:write",
    ///     "exp": in_an_hour,
    /// }));
    /// let claims = auth.validate(&token).await.unwrap();
    /// assert_eq!(claims.sub.as_deref(), Some("alice"));
    /// assert!(claims.has_scope("tools:write"));
    ///
    /// let for_another_server = sign(serde_json::json!({
    ///     "iss": "https://login.example.com",
    ///     "aud": "https://elsewhere.example.com",
    ///     "sub": "alice",
    ///     "scope": "tools:read",
    ///     "exp": in_an_hour,
    /// }));
    /// let refused = auth.validate(&for_another_server).await.unwrap_err();
    /// assert_eq!(refused.status(), http::StatusCode::UNAUTHORIZED);
    ///
    /// let without_the_scope = sign(serde_json::json!({
    ///     "iss": "https://login.example.com",
    ///     "aud": "https://tools.example.com/mcp",
    ///     "sub": "alice",
    ///     "exp": in_an_hour,
    /// }));
    /// let refused = auth.validate(&without_the_scope).await.unwrap_err();
    /// assert_eq!(refused.status(), http::StatusCode::FORBIDDEN);
    /// # }
    /// ```
    pub async fn validate(&self, token: &str) -> Result<Claims, Rejection> {
        let config = &*self.config;
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::invalid_token("the token is too long"));
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            Rejection::invalid_token(
                "the token is malformed, or names an algorithm this server does not accept",
            )
        })?;
        let alg = header.alg;
        if !config.algorithms.contains(&alg) {
            return Err(Rejection::invalid_token(
                "the token's algorithm is not accepted",
            ));
        }
        // RFC 7515, 4.1.11: extensions the server does not understand.
        if header.crit.is_some_and(|crit| !crit.is_empty()) {
            return Err(Rejection::invalid_token(
                "the token names critical extensions this server does not know",
            ));
        }
        let raw = config.verify(token, alg, header.kid.as_deref()).await?;
        let claims = Claims::from_json(raw);
        if config
            .required_scopes
            .iter()
            .any(|scope| !claims.has_scope(scope))
        {
            return Err(Rejection::insufficient_scope(
                config.required_scopes.join(" "),
            ));
        }
        Ok(claims)
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

/// The claims of a valid access token, for the application's
/// [`context`](JwtAuth::context) function.
///
/// ```
/// use toolwright::mcp::Claims;
///
/// let claims = Claims::from_json(serde_json::json!({
///     "sub": "alice",
///     "scope": "tools:read tools:write",
///     "email": "alice@example.com",
/// }));
/// assert_eq!(claims.sub.as_deref(), Some("alice"));
/// assert_eq!(claims.scopes, ["tools:read", "tools:write"]);
/// assert_eq!(claims.raw["email"], "alice@example.com");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Claims {
    /// Whom the token is about (`sub`): a user, or for a client acting on
    /// its own behalf, the client.
    pub sub: Option<String>,
    /// The scopes granted: the `scope` claim split at spaces (RFC 9068),
    /// and the `scp` claim, an array or a string, as some authorization
    /// servers send them.
    pub scopes: Vec<String>,
    /// Every claim, as the token carries them (`iss`, `aud`, `exp`,
    /// `client_id`, custom ones).
    pub raw: Value,
}

impl Claims {
    /// The claims of a token's payload: to test a context function
    /// without signing tokens, say.
    ///
    /// ```
    /// use toolwright::mcp::Claims;
    ///
    /// let claims = Claims::from_json(serde_json::json!({"scp": ["read", "write"]}));
    /// assert_eq!(claims.sub, None);
    /// assert_eq!(claims.scopes, ["read", "write"]);
    /// ```
    pub fn from_json(raw: Value) -> Self {
        let sub = raw.get("sub").and_then(Value::as_str).map(str::to_owned);
        let mut scopes: Vec<String> = Vec::new();
        let mut add = |scope: &str| {
            if !scope.is_empty() && !scopes.iter().any(|s| s == scope) {
                scopes.push(scope.to_owned());
            }
        };
        if let Some(scope) = raw.get("scope").and_then(Value::as_str) {
            scope.split(' ').for_each(&mut add);
        }
        match raw.get("scp") {
            Some(Value::String(scp)) => scp.split(' ').for_each(&mut add),
            Some(Value::Array(scp)) => scp.iter().filter_map(Value::as_str).for_each(&mut add),
            _ => {}
        }
        Claims { sub, scopes, raw }
    }

    /// Whether the token grants `scope`.
    ///
    /// ```
    /// use toolwright::mcp::Claims;
    ///
    /// let claims = Claims::from_json(serde_json::json!({"scope": "tools:read"}));
    /// assert!(claims.has_scope("tools:read"));
    /// assert!(!claims.has_scope("tools:write"));
    /// ```
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

impl Config {
    fn audiences(&self) -> &[String] {
        if self.audiences.is_empty() {
            std::slice::from_ref(&self.metadata.resource)
        } else {
            &self.audiences
        }
    }

    /// The claims of `token`, signed with `alg` by the key `kid`, if a key
    /// verifies it and they pass the checks.
    async fn verify(
        &self,
        token: &str,
        alg: Algorithm,
        kid: Option<&str>,
    ) -> Result<Value, Rejection> {
        let validation = self.validation(alg);
        let given = self.keys.iter().filter(|key| key.fits(alg, kid));
        if let Some(outcome) = verify_with(token, given, &validation) {
            return outcome;
        }
        let Some(remote) = &self.remote else {
            return Err(no_key(!self.keys.is_empty()));
        };
        let keys = remote.current(self).await?;
        if let Some(outcome) = verify_with(token, keys.fitting(alg, kid), &validation) {
            return outcome;
        }
        // No key fits: the issuer may have rotated its keys.
        let keys = remote
            .refetch(self, &keys)
            .await?
            .ok_or_else(|| no_key(true))?;
        verify_with(token, keys.fitting(alg, kid), &validation).unwrap_or_else(|| Err(no_key(true)))
    }

    /// The checks of a token signed with `alg`: `jsonwebtoken` wants the
    /// one algorithm of the key it is given.
    fn validation(&self, alg: Algorithm) -> Validation {
        let mut validation = Validation::new(alg);
        validation.leeway = self.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(self.audiences());
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation
    }
}

/// The refusal of a token no key verifies: `some_keys` says whether there
/// are keys at all, or the server was set up without any.
fn no_key(some_keys: bool) -> Rejection {
    if some_keys {
        Rejection::invalid_token("the token's signing key is unknown")
    } else {
        tracing::error!("JwtAuth has no keys: give it a JWKS URL, a JWKS or a key");
        Rejection::new(
            http::StatusCode::INTERNAL_SERVER_ERROR,
            "the server has no keys to check tokens with",
        )
    }
}

/// The token's claims if one of `keys` verifies it; `None` if there is no
/// key to try.
fn verify_with<'k>(
    token: &str,
    keys: impl Iterator<Item = &'k Key>,
    validation: &Validation,
) -> Option<Result<Value, Rejection>> {
    let mut outcome = None;
    for key in keys {
        match jsonwebtoken::decode::<Value>(token, &key.key, validation) {
            Ok(data) => return Some(Ok(data.claims)),
            // Another key of the same kind may be the one.
            Err(error) if matches!(error.kind(), ErrorKind::InvalidSignature) => {
                outcome = Some(Err(refusal(error.kind())));
            }
            Err(error) => return Some(Err(refusal(error.kind()))),
        }
    }
    outcome
}

/// Why `jsonwebtoken` refused a token, for the client.
fn refusal(kind: &ErrorKind) -> Rejection {
    let why = match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidAudience => "the token is for another audience",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(claim) => match claim.as_str() {
            "exp" => "the token has no expiry (exp)",
            "iss" => "the token has no issuer (iss)",
            "aud" => "the token has no audience (aud)",
            _ => "the token lacks a required claim",
        },
        ErrorKind::InvalidClaimFormat(_) => "a claim of the token is malformed",
        ErrorKind::InvalidAlgorithm
        | ErrorKind::MissingAlgorithm
        | ErrorKind::UnsupportedAlgorithm
        | ErrorKind::InvalidAlgorithmName => "the token's algorithm is not accepted",
        ErrorKind::InvalidEcdsaKey
        | ErrorKind::InvalidEddsaKey
        | ErrorKind::InvalidRsaKey(_)
        | ErrorKind::InvalidKeyFormat => "the token's signing key cannot verify it",
        _ => "the token is malformed",
    };
    Rejection::invalid_token(why)
}

/// One verification key.
#[derive(Clone)]
struct Key {
    kid: Option<String>,
    /// The one algorithm the key is for, if its JWK says.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

impl Key {
    /// The key of a JWK that verifies signatures, or why not.
    fn from_jwk(jwk: &Jwk) -> Result<Key, &'static str> {
        let common = &jwk.common;
        if matches!(
            common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            return Err("its use is not `sig`");
        }
        if common
            .key_operations
            .as_ref()
            .is_some_and(|ops| !ops.contains(&KeyOperations::Verify))
        {
            return Err("its key_ops lack `verify`");
        }
        let alg = match common.key_algorithm {
            Some(alg) => Some(Algorithm::try_from(alg).map_err(|_| "its alg is not a signature")?),
            None => None,
        };
        let key = DecodingKey::from_jwk(jwk).map_err(|_| "its parameters are not a key")?;
        Ok(Key {
            kid: common.key_id.clone(),
            alg,
            key,
        })
    }

    /// Whether the key may verify a token signed with `alg` naming `kid`.
    /// The key's kind must be the algorithm's: an RSA or EC public key
    /// never verifies an HMAC signature.
    fn fits(&self, alg: Algorithm, kid: Option<&str>) -> bool {
        self.key.family() == alg.family()
            && self.alg.is_none_or(|own| own == alg)
            && match (kid, &self.kid) {
                (Some(wanted), Some(own)) => wanted == own,
                _ => true,
            }
    }
}

/// Keys fetched from a JWKS URL.
struct KeySet {
    keys: Vec<Key>,
    fetched_at: Instant,
}

impl KeySet {
    fn fitting(&self, alg: Algorithm, kid: Option<&str>) -> impl Iterator<Item = &Key> {
        self.keys.iter().filter(move |key| key.fits(alg, kid))
    }
}

/// A JWKS URL, the keys last fetched from it, and the fetching.
struct RemoteKeys {
    url: String,
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
    fn new(url: String) -> Self {
        RemoteKeys {
            url,
            current: ArcSwapOption::empty(),
            fetcher: tokio::sync::Mutex::new(Fetcher::default()),
        }
    }

    /// The keys to check a token with: fetched on first use, and again
    /// when they are older than the max age (then, while the fetch fails,
    /// the old ones).
    async fn current(&self, config: &Config) -> Result<Arc<KeySet>, Rejection> {
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
    async fn refetch(
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
    fn scopes_come_from_scope_and_scp_without_repeats() {
        let claims = Claims::from_json(serde_json::json!({
            "scope": "a  b", "scp": ["b", "c", 7]
        }));
        assert_eq!(claims.scopes, ["a", "b", "c"]);
        let claims = Claims::from_json(serde_json::json!({"scp": "x y"}));
        assert_eq!(claims.scopes, ["x", "y"]);
    }

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

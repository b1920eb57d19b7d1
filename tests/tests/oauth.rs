//! `JwtAuth` in front of a real `McpServer` over Streamable HTTP on
//! loopback, its keys served by a JWKS endpoint on loopback too.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use toolwright::mcp::{HttpOptions, JwtAuth, McpServer, ResourceMetadata};
use toolwright::{
    Catalog, Container, Context, Executor, Principal,
    registry::{Selector, View},
    tool,
};

mod mcp_client;
use mcp_client::{call, text, tool_names};

const ISSUER: &str = "https://login.example.test";

/// The caller, as the application makes it from a token's claims.
#[derive(Clone)]
struct User {
    sub: String,
    scopes: Vec<String>,
}

/// Sessions belong to the subject, whatever token it comes with.
impl Principal for User {
    fn id(&self) -> &str {
        &self.sub
    }
}

/// Who is calling, with the scopes of their token.
#[tool(key = "session.whoami", effect = read, authorize = public)]
async fn whoami(user: Context<User>) -> String {
    format!("{} [{}]", user.sub, user.scopes.join(" "))
}

/// Delete everything: listed only for tokens with `tools:admin`.
#[tool(key = "admin.wipe", effect = read, authorize = public)]
async fn wipe() -> bool {
    true
}

/// A key of the authorization server: signs tokens, published as a JWK.
struct Signer {
    kid: &'static str,
    alg: Algorithm,
    key: EncodingKey,
}

impl Signer {
    fn rsa(kid: &'static str, pem: &str) -> Self {
        let key = EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap();
        Signer {
            kid,
            alg: Algorithm::RS256,
            key,
        }
    }

    fn ec(kid: &'static str, pem: &str) -> Self {
        let key = EncodingKey::from_ec_pem(pem.as_bytes()).unwrap();
        Signer {
            kid,
            alg: Algorithm::ES256,
            key,
        }
    }

    /// The public key, as the JWKS publishes it.
    fn jwk(&self) -> Value {
        let mut jwk = Jwk::from_encoding_key(&self.key, self.alg).unwrap();
        jwk.common.key_id = Some(self.kid.to_owned());
        serde_json::to_value(jwk).unwrap()
    }

    /// A token for `claims`, naming this key.
    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.to_owned());
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }
}

fn key_a() -> Signer {
    Signer::rsa("a", include_str!("oauth/rsa-a.pem"))
}

fn key_b() -> Signer {
    Signer::rsa("b", include_str!("oauth/rsa-b.pem"))
}

fn key_ec() -> Signer {
    Signer::ec("ec", include_str!("oauth/ec.pem"))
}

fn jwks(keys: &[&Signer]) -> Value {
    json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()})
}

/// A JWKS endpoint on loopback whose document, and whether it fails or
/// never answers, the test changes as it goes; it counts the requests it
/// gets.
#[derive(Clone)]
struct JwksServer {
    url: String,
    document: Arc<Mutex<Value>>,
    failing: Arc<AtomicBool>,
    hanging: Arc<AtomicBool>,
    hits: Arc<AtomicUsize>,
}

impl JwksServer {
    async fn start(document: Value) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let server = JwksServer {
            url: format!("http://{}/jwks.json", listener.local_addr().unwrap()),
            document: Arc::new(Mutex::new(document)),
            failing: Arc::default(),
            hanging: Arc::default(),
            hits: Arc::default(),
        };
        let state = server.clone();
        let router = axum::Router::new().route(
            "/jwks.json",
            axum::routing::get(move || {
                let state = state.clone();
                async move {
                    state.hits.fetch_add(1, Ordering::SeqCst);
                    if state.hanging.load(Ordering::SeqCst) {
                        std::future::pending::<()>().await;
                    }
                    if state.failing.load(Ordering::SeqCst) {
                        return (http::StatusCode::INTERNAL_SERVER_ERROR, String::new());
                    }
                    let document = state.document.lock().unwrap().to_string();
                    (http::StatusCode::OK, document)
                }
            }),
        );
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        server
    }

    fn publish(&self, document: Value) {
        *self.document.lock().unwrap() = document;
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }

    /// Waits until it has had more than `hits` requests.
    async fn hit_after(&self, hits: usize) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.hits() <= hits {
            assert!(Instant::now() < deadline, "no request after {hits}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// An MCP endpoint on loopback.
#[derive(Clone)]
struct Endpoint {
    /// `http://127.0.0.1:PORT/mcp`: the resource, and so the audience.
    url: String,
}

impl Endpoint {
    /// The URL its 401s name.
    fn metadata_url(&self) -> String {
        self.url
            .replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    }
}

/// Serves an `McpServer<User>` behind `JwtAuth`, keys from `jwks_url`,
/// set up further by `configure`.
async fn serve(jwks_url: &str, configure: impl FnOnce(JwtAuth) -> JwtAuth) -> Endpoint {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let metadata = ResourceMetadata::new(&url, [ISSUER]).name("oauth test tools");
    let auth = configure(JwtAuth::new(metadata, ISSUER).jwks_url(jwks_url)).context(|claims| {
        Ok(User {
            sub: claims.sub.clone().unwrap_or_default(),
            scopes: claims.scopes.clone(),
        })
    });
    let executor = Executor::builder(Catalog::discover().unwrap(), Container::default())
        .principal::<User>()
        .build()
        .unwrap();
    let server = McpServer::builder(executor, "oauth-test", "0.1.0")
        .views(|user: &User| {
            if user.scopes.iter().any(|s| s == "tools:admin") {
                View::new(Selector::All)
            } else {
                View::new(!Selector::key("admin.wipe"))
            }
        })
        .build();
    let router = server.http_router(auth, HttpOptions::default());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Endpoint { url }
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

/// The claims of a good token for `endpoint`, with `changes` (a `null`
/// removes the claim).
fn claims(endpoint: &Endpoint, changes: Value) -> Value {
    let mut claims = json!({
        "iss": ISSUER,
        "aud": endpoint.url,
        "sub": "alice",
        "scope": "tools:read",
        "iat": now(),
        "exp": now() + 3600,
    });
    for (name, value) in changes.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(name);
        } else {
            claims[name] = value.clone();
        }
    }
    claims
}

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    })
    .to_string()
}

/// An `initialize` POST with `token`, if any.
async fn initialize(endpoint: &Endpoint, token: Option<&str>) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(&endpoint.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_body());
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    request.send().await.unwrap()
}

/// A POST of `body` in `session`, with `token`.
async fn in_session(
    endpoint: &Endpoint,
    token: &str,
    session: &str,
    body: Value,
) -> reqwest::Response {
    reqwest::Client::new()
        .post(&endpoint.url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", session)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

fn challenge(response: &reqwest::Response) -> String {
    response.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned()
}

async fn http_client(endpoint: &Endpoint, token: String) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(endpoint.url.clone()).auth_header(token),
    );
    ().serve(transport).await.unwrap()
}

/// Base64url without padding, for tokens `jsonwebtoken` refuses to make.
fn b64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
        }
    }
    out
}

/// An unsigned token: `alg: none`.
fn unsigned(claims: &Value) -> String {
    let header = json!({"alg": "none", "typ": "JWT", "kid": "a"});
    format!(
        "{}.{}.",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    )
}

/// A token signed with HMAC, the RSA public key `a` as the secret: what an
/// attacker who read the JWKS can make.
fn hmac_with_public_key(claims: &Value) -> String {
    let public_pem = include_str!("oauth/rsa-a.pub.pem");
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("a".to_owned());
    let secret = EncodingKey::from_secret(public_pem.as_bytes()).unwrap();
    jsonwebtoken::encode(&header, claims, &secret).unwrap()
}

#[tokio::test]
async fn a_valid_token_lists_tools_and_its_scopes_reach_the_context() {
    let (a, ec) = (key_a(), key_ec());
    let jwks = JwksServer::start(jwks(&[&a, &ec])).await;
    let endpoint = serve(&jwks.url, |auth| auth).await;

    let reader = http_client(&endpoint, a.sign(&claims(&endpoint, json!({})))).await;
    let names = tool_names(&reader).await;
    assert!(names.contains(&"whoami".to_owned()));
    assert!(
        !names.contains(&"wipe".to_owned()),
        "views follow the scopes"
    );
    let who = call(&reader, "whoami", json!({})).await;
    assert_eq!(text(&who), "alice [tools:read]");
    reader.cancel().await.unwrap();

    // ES256, and scopes as an `scp` array.
    let admin_claims = claims(
        &endpoint,
        json!({"sub": "root", "scope": null, "scp": ["tools:read", "tools:admin"]}),
    );
    let admin = http_client(&endpoint, ec.sign(&admin_claims)).await;
    assert!(tool_names(&admin).await.contains(&"wipe".to_owned()));
    let who = call(&admin, "whoami", json!({})).await;
    assert_eq!(text(&who), "root [tools:read tools:admin]");
    admin.cancel().await.unwrap();
    assert_eq!(jwks.hits(), 1, "the keys are fetched once and kept");
}

#[tokio::test]
async fn refused_tokens_are_401_invalid_token_naming_the_metadata() {
    let a = key_a();
    let stranger = Signer::rsa("stranger", include_str!("oauth/rsa-b.pem"));
    let jwks = JwksServer::start(jwks(&[&a])).await;
    let endpoint = serve(&jwks.url, |auth| auth).await;
    let good = |changes| claims(&endpoint, changes);

    let cases = [
        (
            "expired",
            a.sign(&good(json!({"exp": now() - 3600}))),
            "expired",
        ),
        (
            "not valid yet",
            a.sign(&good(json!({"nbf": now() + 3600}))),
            "not valid yet",
        ),
        (
            "wrong audience",
            a.sign(&good(json!({"aud": "https://elsewhere.example.test/mcp"}))),
            "audience",
        ),
        (
            "no audience",
            a.sign(&good(json!({"aud": null}))),
            "no audience",
        ),
        (
            "wrong issuer",
            a.sign(&good(json!({"iss": "https://evil.example.test"}))),
            "issuer",
        ),
        (
            "unknown kid",
            stranger.sign(&good(json!({}))),
            "key is unknown",
        ),
        ("alg none", unsigned(&good(json!({}))), "algorithm"),
        (
            "HS256 signed with the public key",
            hmac_with_public_key(&good(json!({}))),
            "algorithm",
        ),
        ("garbage", "not.a.jwt".to_owned(), "malformed"),
    ];
    for (case, token, reason) in cases {
        let response = initialize(&endpoint, Some(&token)).await;
        assert_eq!(response.status(), 401, "{case}");
        let challenge = challenge(&response);
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{case}: {challenge}"
        );
        assert!(
            challenge.contains(&format!(
                "resource_metadata=\"{}\"",
                endpoint.metadata_url()
            )),
            "{case}: {challenge}"
        );
        assert!(challenge.contains(reason), "{case}: {challenge}");
        let signature = token.rsplit('.').next().unwrap();
        let body = response.text().await.unwrap();
        assert!(
            signature.is_empty() || !(challenge.contains(signature) || body.contains(signature)),
            "{case}: the token is never echoed"
        );
    }

    // No token at all: a plain challenge, naming the metadata.
    let response = initialize(&endpoint, None).await;
    assert_eq!(response.status(), 401);
    assert_eq!(
        challenge(&response),
        format!("Bearer resource_metadata=\"{}\"", endpoint.metadata_url())
    );
}

#[tokio::test]
async fn hmac_with_the_public_key_is_refused_even_when_hmac_is_allowed() {
    let a = key_a();
    let jwks = JwksServer::start(jwks(&[&a])).await;
    let endpoint = serve(&jwks.url, |auth| {
        auth.algorithms([Algorithm::RS256, Algorithm::HS256])
    })
    .await;
    let forged = hmac_with_public_key(&claims(&endpoint, json!({})));
    let response = initialize(&endpoint, Some(&forged)).await;
    assert_eq!(response.status(), 401);
    assert!(challenge(&response).contains("error=\"invalid_token\""));
    // The real key still verifies.
    let genuine = a.sign(&claims(&endpoint, json!({})));
    assert_eq!(initialize(&endpoint, Some(&genuine)).await.status(), 200);
}

#[tokio::test]
async fn a_rotated_key_is_picked_up_after_a_refetch() {
    let (a, b) = (key_a(), key_b());
    let jwks = JwksServer::start(jwks(&[&a])).await;
    let endpoint = serve(&jwks.url, |auth| auth.jwks_refetch_interval(Duration::ZERO)).await;
    let with_a = a.sign(&claims(&endpoint, json!({})));
    let with_b = b.sign(&claims(&endpoint, json!({})));
    assert_eq!(initialize(&endpoint, Some(&with_a)).await.status(), 200);
    assert_eq!(jwks.hits(), 1);

    // The issuer rotates: `b` replaces `a`.
    jwks.publish(self::jwks(&[&b]));
    let client = http_client(&endpoint, with_b).await;
    let who = call(&client, "whoami", json!({})).await;
    assert_eq!(text(&who), "alice [tools:read]");
    client.cancel().await.unwrap();
    assert_eq!(jwks.hits(), 2, "one refetch, for the unknown kid");

    // The withdrawn key no longer verifies, once the set is fetched again.
    let response = initialize(&endpoint, Some(&with_a)).await;
    assert_eq!(response.status(), 401);
    assert!(challenge(&response).contains("key is unknown"));
}

#[tokio::test]
async fn unknown_kids_do_not_hammer_the_jwks_endpoint() {
    let a = key_a();
    let jwks = JwksServer::start(jwks(&[&a])).await;
    // The default refetch interval: 10 s.
    let endpoint = serve(&jwks.url, |auth| auth).await;
    let good = a.sign(&claims(&endpoint, json!({})));
    assert_eq!(initialize(&endpoint, Some(&good)).await.status(), 200);
    for kid in ["x1", "x2", "x3", "x4", "x5"] {
        let made_up = Signer::rsa(kid, include_str!("oauth/rsa-b.pem"));
        let token = made_up.sign(&claims(&endpoint, json!({})));
        assert_eq!(initialize(&endpoint, Some(&token)).await.status(), 401);
    }
    assert_eq!(jwks.hits(), 1, "no fetch within the refetch interval");
}

#[tokio::test]
async fn a_kid_a_fresh_fetch_lacked_is_refused_without_fetching_again_for_a_while() {
    let a = key_a();
    let jwks = JwksServer::start(jwks(&[&a])).await;
    let interval = Duration::from_millis(500);
    // Remembered as unknown for six intervals: 3 s.
    let endpoint = serve(&jwks.url, |auth| auth.jwks_refetch_interval(interval)).await;
    let good = a.sign(&claims(&endpoint, json!({})));
    assert_eq!(initialize(&endpoint, Some(&good)).await.status(), 200);
    let made_up = Signer::rsa("made-up", include_str!("oauth/rsa-b.pem"));
    let token = made_up.sign(&claims(&endpoint, json!({})));
    for _ in 0..4 {
        // Each time past the refetch interval, which alone would allow a fetch.
        tokio::time::sleep(interval + Duration::from_millis(100)).await;
        let response = initialize(&endpoint, Some(&token)).await;
        assert_eq!(response.status(), 401);
        assert!(challenge(&response).contains("key is unknown"));
    }
    assert_eq!(
        jwks.hits(),
        2,
        "one fetch found the kid unknown; the requests after it are refused without one"
    );
    assert_eq!(initialize(&endpoint, Some(&good)).await.status(), 200);
}

#[tokio::test]
async fn concurrent_requests_share_one_fetch_of_a_hanging_jwks_endpoint() {
    let jwks = JwksServer::start(jwks(&[&key_a()])).await;
    jwks.hanging.store(true, Ordering::SeqCst);
    // A fetch lasts longer than the refetch interval: each request that
    // waited for it would be allowed a fetch of its own after it.
    let timeout = Duration::from_secs(1);
    let endpoint = serve(&jwks.url, |auth| {
        auth.jwks_refetch_interval(Duration::from_millis(500))
            .jwks_fetch_timeout(timeout)
    })
    .await;
    let token = key_a().sign(&claims(&endpoint, json!({})));

    let started = Instant::now();
    let mut requests = tokio::task::JoinSet::new();
    for _ in 0..10 {
        let (endpoint, token) = (endpoint.clone(), token.clone());
        requests.spawn(async move { initialize(&endpoint, Some(&token)).await.status() });
    }
    let statuses = requests.join_all().await;
    assert_eq!(statuses, [503; 10], "no keys could be fetched");
    assert_eq!(jwks.hits(), 1, "one fetch, shared by every request");
    // One after another, they would take ten timeouts.
    assert!(started.elapsed() < 5 * timeout, "{:?}", started.elapsed());
}

#[tokio::test]
async fn the_fetch_timeout_bounds_the_wait_for_a_hanging_jwks_endpoint() {
    let jwks = JwksServer::start(jwks(&[&key_a()])).await;
    jwks.hanging.store(true, Ordering::SeqCst);
    let endpoint = serve(&jwks.url, |auth| {
        auth.jwks_fetch_timeout(Duration::from_millis(200))
    })
    .await;
    let token = key_a().sign(&claims(&endpoint, json!({})));
    let started = Instant::now();
    let response = initialize(&endpoint, Some(&token)).await;
    assert_eq!(response.status(), 503);
    assert!(response.text().await.unwrap().contains("cannot be fetched"));
    // Well before the default timeout, 5 s.
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(jwks.hits(), 1);
}

#[tokio::test]
async fn stale_keys_answer_at_once_while_a_hanging_jwks_endpoint_is_asked_again() {
    let a = key_a();
    let jwks = JwksServer::start(jwks(&[&a])).await;
    // The fetch timeout is then half the interval: 2 s.
    let interval = Duration::from_secs(4);
    let endpoint = serve(&jwks.url, |auth| {
        auth.jwks_max_age(Duration::ZERO)
            .jwks_refetch_interval(interval)
    })
    .await;
    let token = a.sign(&claims(&endpoint, json!({})));
    assert_eq!(initialize(&endpoint, Some(&token)).await.status(), 200);

    jwks.hanging.store(true, Ordering::SeqCst);
    // The keys are stale at once; past the interval, they may be refreshed.
    tokio::time::sleep(interval).await;
    let started = Instant::now();
    for _ in 0..5 {
        assert_eq!(initialize(&endpoint, Some(&token)).await.status(), 200);
    }
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "answered before the refresh times out: {:?}",
        started.elapsed()
    );
    jwks.hit_after(1).await;
    assert_eq!(jwks.hits(), 2, "one refresh, shared");
}

#[tokio::test]
async fn a_failing_jwks_keeps_the_last_keys_and_refuses_new_ones_with_503() {
    let (a, b) = (key_a(), key_b());
    let jwks = JwksServer::start(jwks(&[&a])).await;
    // Every request finds the keys stale and may fetch them again.
    let endpoint = serve(&jwks.url, |auth| {
        auth.jwks_refetch_interval(Duration::ZERO)
            .jwks_max_age(Duration::ZERO)
    })
    .await;
    let with_a = a.sign(&claims(&endpoint, json!({})));
    assert_eq!(initialize(&endpoint, Some(&with_a)).await.status(), 200);

    jwks.failing.store(true, Ordering::SeqCst);
    jwks.publish(self::jwks(&[&b]));
    let hits = jwks.hits();
    assert_eq!(
        initialize(&endpoint, Some(&with_a)).await.status(),
        200,
        "the last keys stay in use"
    );
    // A refresh is tried, in the background.
    jwks.hit_after(hits).await;
    let with_b = b.sign(&claims(&endpoint, json!({})));
    let response = initialize(&endpoint, Some(&with_b)).await;
    assert_eq!(
        response.status(),
        503,
        "a key that may be new cannot be checked"
    );

    jwks.failing.store(false, Ordering::SeqCst);
    assert_eq!(initialize(&endpoint, Some(&with_b)).await.status(), 200);
}

#[tokio::test]
async fn keys_that_were_never_fetched_are_503_not_a_panic() {
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/jwks.json", closed.local_addr().unwrap());
    drop(closed);
    let endpoint = serve(&url, |auth| auth).await;
    let token = key_a().sign(&claims(&endpoint, json!({})));
    let response = initialize(&endpoint, Some(&token)).await;
    assert_eq!(response.status(), 503);
    assert!(response.text().await.unwrap().contains("cannot be fetched"));
}

#[tokio::test]
async fn a_token_without_a_required_scope_is_403_insufficient_scope() {
    let a = key_a();
    let jwks = JwksServer::start(jwks(&[&a])).await;
    let endpoint = serve(&jwks.url, |auth| {
        auth.required_scopes(["tools:read", "tools:write"])
    })
    .await;
    let reader = a.sign(&claims(&endpoint, json!({"scope": "tools:read"})));
    let response = initialize(&endpoint, Some(&reader)).await;
    assert_eq!(response.status(), 403);
    let challenge = challenge(&response);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(
        challenge.contains("scope=\"tools:read tools:write\""),
        "{challenge}"
    );
    assert!(challenge.contains(&endpoint.metadata_url()), "{challenge}");

    let writer = a.sign(&claims(
        &endpoint,
        json!({"scope": "tools:read tools:write"}),
    ));
    assert_eq!(initialize(&endpoint, Some(&writer)).await.status(), 200);
}

#[tokio::test]
async fn the_metadata_names_the_issuer_as_authorization_server() {
    let jwks = JwksServer::start(jwks(&[&key_a()])).await;
    let endpoint = serve(&jwks.url, |auth| auth.required_scopes(["tools:read"])).await;
    let root = endpoint
        .url
        .replace("/mcp", "/.well-known/oauth-protected-resource");
    for url in [endpoint.metadata_url(), root] {
        let response = reqwest::get(&url).await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        let metadata: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        assert_eq!(metadata["resource"], endpoint.url);
        assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
        assert_eq!(metadata["scopes_supported"], json!(["tools:read"]));
        assert_eq!(metadata["bearer_methods_supported"], json!(["header"]));
    }
    assert_eq!(jwks.hits(), 0, "serving the metadata needs no keys");
}

#[tokio::test]
async fn a_refreshed_token_keeps_the_session_of_its_subject() {
    let a = key_a();
    let jwks = JwksServer::start(jwks(&[&a])).await;
    let endpoint = serve(&jwks.url, |auth| auth).await;
    let first = a.sign(&claims(&endpoint, json!({})));
    let response = initialize(&endpoint, Some(&first)).await;
    assert_eq!(response.status(), 200);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();

    // The client refreshes its token: another token, the same subject.
    let refreshed = a.sign(&claims(&endpoint, json!({"exp": now() + 7200})));
    assert_ne!(first, refreshed);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = in_session(&endpoint, &refreshed, &session, initialized).await;
    assert_eq!(response.status(), 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let response = in_session(&endpoint, &refreshed, &session, list.clone()).await;
    assert_eq!(response.status(), 200);

    // Another subject's valid token is a stranger to it.
    let bob = a.sign(&claims(&endpoint, json!({"sub": "bob"})));
    let response = in_session(&endpoint, &bob, &session, list).await;
    assert_eq!(response.status(), 404);
}

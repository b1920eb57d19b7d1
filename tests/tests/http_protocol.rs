//! The Streamable HTTP endpoint as an attacker on loopback meets it:
//! sessions bound to their principal and capped, bodies read within their
//! time, JSON-RPC errors for bodies that are no message, CORS for the
//! allowed origins, `Host` checked first, and the protected-resource
//! metadata a 401 names.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolwright::mcp::http::request::Parts;
use toolwright::mcp::{
    Authenticate, HttpOptions, McpServer, Rejection, ResourceMetadata, bearer_token,
};
use toolwright::{Catalog, Container, Executor, Principal, tool};

#[derive(Clone)]
struct Actor(&'static str);

impl Principal for Actor {
    fn id(&self) -> &str {
        self.0
    }
}

/// Say hello.
#[tool(key = "greet.hello", effect = read, authorize = public)]
async fn hello(name: String) -> String {
    format!("hello {name}")
}

/// Tokens `ada-1` and `ada-2` are both ada's; `bob` is bob's.
fn authenticate(parts: &Parts) -> Result<Actor, Rejection> {
    match bearer_token(&parts.headers) {
        Some("ada-1" | "ada-2") => Ok(Actor("ada")),
        Some("bob") => Ok(Actor("bob")),
        _ => Err(Rejection::unauthorized()),
    }
}

async fn serve(options: HttpOptions, authenticate: impl Authenticate<Actor>) -> String {
    let catalog = Catalog::builder().register::<HelloArgs>().build().unwrap();
    let executor = Executor::builder(catalog, Container::default())
        .principal::<Actor>()
        .build()
        .unwrap();
    serve_executor(executor, options, authenticate).await
}

async fn serve_executor(
    executor: Executor,
    options: HttpOptions,
    authenticate: impl Authenticate<Actor>,
) -> String {
    let router =
        McpServer::<Actor>::new(executor, "protocol", "0").http_router(authenticate, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}/mcp")
}

fn initialize() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    })
    .to_string()
}

fn request(method: reqwest::Method, url: &str, token: &str) -> reqwest::RequestBuilder {
    without_credentials(method, url).header("authorization", format!("Bearer {token}"))
}

fn without_credentials(method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .request(method, url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
}

async fn post(url: &str, token: &str, body: impl Into<String>) -> reqwest::Response {
    request(reqwest::Method::POST, url, token)
        .body(body.into())
        .send()
        .await
        .unwrap()
}

/// Opens a session for `token`: its id.
async fn open_session(url: &str, token: &str) -> String {
    let response = post(url, token, initialize()).await;
    assert_eq!(response.status(), 200, "{:?}", response.text().await);
    let id = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let response = request(reqwest::Method::POST, url, token)
        .header("mcp-session-id", &id)
        .body(initialized.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    id
}

async fn in_session(
    method: reqwest::Method,
    url: &str,
    token: &str,
    session: &str,
    body: Value,
) -> reqwest::Response {
    let mut builder = request(method.clone(), url, token).header("mcp-session-id", session);
    if method == reqwest::Method::POST {
        builder = builder.body(body.to_string());
    }
    builder.send().await.unwrap()
}

fn tools_list() -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
}

#[tokio::test]
async fn another_principal_cannot_use_close_read_or_cancel_a_session() {
    let url = serve(HttpOptions::default(), authenticate).await;
    let session = open_session(&url, "ada-1").await;

    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 2}});
    for (method, body) in [
        (reqwest::Method::POST, tools_list()),
        (reqwest::Method::POST, cancel),
        (reqwest::Method::GET, Value::Null),
        (reqwest::Method::DELETE, Value::Null),
    ] {
        let response = in_session(method.clone(), &url, "bob", &session, body).await;
        assert_eq!(response.status(), 404, "bob's {method} in ada's session");
    }

    // The session is intact, and the same principal with another token is
    // still its owner.
    let response = in_session(reqwest::Method::POST, &url, "ada-2", &session, tools_list()).await;
    assert_eq!(response.status(), 200);
    assert!(response.text().await.unwrap().contains("hello"));
    let response = in_session(
        reqwest::Method::DELETE,
        &url,
        "ada-1",
        &session,
        Value::Null,
    )
    .await;
    assert!(response.status().is_success(), "{}", response.status());
    let response = in_session(reqwest::Method::POST, &url, "ada-1", &session, tools_list()).await;
    assert_eq!(response.status(), 404, "a closed session is gone");
}

#[tokio::test]
async fn session_flooding_stops_at_the_caps_with_a_clear_error() {
    let url = serve(HttpOptions::default().max_sessions(3, 2), authenticate).await;
    let first = open_session(&url, "ada-1").await;
    open_session(&url, "ada-2").await;
    // Ada's third session: over her cap.
    let response = post(&url, "ada-1", initialize()).await;
    assert_eq!(response.status(), 429);
    let error: Value = response.json().await.unwrap();
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains("maximum of 2 sessions"), "{message}");
    // Bob fills the server; then nobody gets one.
    open_session(&url, "bob").await;
    let response = post(&url, "bob", initialize()).await;
    assert_eq!(response.status(), 503);
    let error: Value = response.json().await.unwrap();
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("maximum of 3 sessions")
    );
    // Closing one makes room again.
    let response = in_session(reqwest::Method::DELETE, &url, "ada-1", &first, Value::Null).await;
    // 200: what the official SDKs take as closed.
    assert_eq!(response.status(), 200);
    open_session(&url, "bob").await;
}

#[tokio::test]
async fn idle_sessions_are_closed_to_make_room() {
    let options = HttpOptions::default()
        .max_sessions(1, 1)
        .session_idle_timeout(Duration::from_millis(300));
    let url = serve(options, authenticate).await;
    let idle = open_session(&url, "ada-1").await;
    assert_eq!(post(&url, "bob", initialize()).await.status(), 503);
    tokio::time::sleep(Duration::from_millis(600)).await;
    open_session(&url, "bob").await;
    let response = in_session(reqwest::Method::POST, &url, "ada-1", &idle, tools_list()).await;
    assert_eq!(response.status(), 404, "the idle session was closed");
}

#[tokio::test]
async fn bodies_that_are_no_message_get_json_rpc_errors() {
    let url = serve(
        HttpOptions::default().stateless(true).json_response(true),
        authenticate,
    )
    .await;
    let cases: [(&[u8], i64, Value); 5] = [
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1,", -32700, Value::Null),
        (
            b"{\"jsonrpc\": \"2.0\", \"method\": \"\xff\xfe\"}",
            -32700,
            Value::Null,
        ),
        (
            br#"[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]"#,
            -32600,
            Value::Null,
        ),
        (br#"{"id": 7, "hello": "world"}"#, -32600, json!(7)),
        (b"42", -32600, Value::Null),
    ];
    for (body, code, id) in cases {
        let response = request(reqwest::Method::POST, &url, "ada-1")
            .body(body.to_vec())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 400, "{}", String::from_utf8_lossy(body));
        let error: Value = response.json().await.unwrap();
        assert_eq!(error["jsonrpc"], "2.0");
        assert_eq!(
            error["error"]["code"],
            code,
            "{}",
            String::from_utf8_lossy(body)
        );
        assert_eq!(error["id"], id);
    }
    // A wrong media type stays what it is.
    let response = reqwest::Client::new()
        .post(&url)
        .header("authorization", "Bearer ada-1")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "text/plain")
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 415);
}

#[tokio::test]
async fn a_slow_body_gets_408_at_the_body_timeout() {
    let options = HttpOptions::default().body_timeout(Duration::from_millis(300));
    let url = serve(options, authenticate).await;
    let head = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ada-1\r\n\
         content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
         content-length: 100\r\n\r\n{\"jsonrpc\"";
    let answer = raw_answer(&url, head.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
}

/// What the server answers `request`, sent on a fresh connection, before
/// the test's own limit (the answer's head and whatever came with it).
async fn raw_answer(url: &str, request: &[u8]) -> String {
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    socket.write_all(request).await.unwrap();
    let mut answer = vec![0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut answer))
        .await
        .expect("answered before the test's own limit")
        .unwrap();
    String::from_utf8_lossy(&answer[..read]).into_owned()
}

#[tokio::test]
async fn an_undeclared_body_over_the_limit_gets_413_as_it_arrives() {
    // Chunked, so no length is declared: the endpoint reads the body and
    // refuses it past the limit, without waiting for the rest (the last
    // chunk never comes), with sessions and without.
    for stateless in [false, true] {
        let options = HttpOptions::default()
            .stateless(stateless)
            .max_body_bytes(1024);
        let url = serve(options, authenticate).await;
        let chunk = format!("800\r\n{}\r\n", "x".repeat(0x800));
        let request = format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ada-1\r\n\
             content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             transfer-encoding: chunked\r\n\r\n{chunk}"
        );
        let answer = raw_answer(&url, request.as_bytes()).await;
        assert!(
            answer.starts_with("HTTP/1.1 413"),
            "stateless {stateless}: {answer}"
        );
    }
}

#[tokio::test]
async fn a_browsers_body_declared_too_large_gets_a_413_the_page_can_read() {
    let url = serve(HttpOptions::default().max_body_bytes(1024), authenticate).await;
    let request = |origin: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n{origin}\
             content-type: application/json\r\ncontent-length: 100000000000\r\n\r\n"
        )
    };
    // Refused before the body or credentials, with CORS headers for the page.
    let browser = raw_answer(
        &url,
        request("origin: http://localhost:5173\r\n").as_bytes(),
    )
    .await;
    assert!(browser.starts_with("HTTP/1.1 413"), "{browser}");
    assert!(
        browser
            .to_ascii_lowercase()
            .contains("access-control-allow-origin: http://localhost:5173"),
        "{browser}"
    );
    // Any other caller: the same 413, without them.
    let other = raw_answer(&url, request("").as_bytes()).await;
    assert!(other.starts_with("HTTP/1.1 413"), "{other}");
    assert!(
        !other.to_ascii_lowercase().contains("access-control-"),
        "{other}"
    );
}

#[tokio::test]
async fn cors_preflights_from_allowed_origins_are_answered_before_authentication() {
    let url = serve(HttpOptions::default(), authenticate).await;
    let preflight = |origin: &'static str| {
        reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &url)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization, content-type, mcp-session-id",
            )
            .send()
    };
    let allowed = preflight("http://localhost:5173").await.unwrap();
    assert!(allowed.status().is_success(), "{}", allowed.status());
    let headers = allowed.headers();
    assert_eq!(
        headers["access-control-allow-origin"],
        "http://localhost:5173"
    );
    assert!(
        headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    let allowed_headers = headers["access-control-allow-headers"].to_str().unwrap();
    assert!(
        allowed_headers.contains("authorization") && allowed_headers.contains("mcp-session-id")
    );

    let foreign = preflight("http://evil.example").await.unwrap();
    assert!(
        foreign
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );

    // A real request from the page: the answer lets the page read the
    // session id.
    let response = request(reqwest::Method::POST, &url, "ada-1")
        .header("origin", "http://localhost:5173")
        .body(initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let exposed = response.headers()["access-control-expose-headers"]
        .to_str()
        .unwrap();
    assert!(exposed.contains("mcp-session-id"), "{exposed}");

    // A client that is no browser sends no `Origin`: it gets no CORS
    // headers (skipping the layer keeps its cost off every call).
    let response = request(reqwest::Method::POST, &url, "ada-1")
        .body(initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("access-control-expose-headers")
            .is_none()
    );
    assert!(response.headers().get("vary").is_none());
}

/// An authenticator of an OAuth-protected endpoint.
#[derive(Clone)]
struct Protected(ResourceMetadata);

impl Authenticate<Actor> for Protected {
    async fn authenticate(&self, parts: &Parts) -> Result<Actor, Rejection> {
        match bearer_token(&parts.headers) {
            None => Err(Rejection::unauthorized()),
            Some("good") => Ok(Actor("ada")),
            Some(_) => Err(Rejection::invalid_token("the token has expired")),
        }
    }

    fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        Some(&self.0)
    }
}

#[tokio::test]
async fn a_protected_endpoint_names_its_metadata_in_every_401_and_serves_it() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let metadata = ResourceMetadata::new(format!("{origin}/mcp"), ["https://login.example.com"])
        .scopes(["tools"]);
    let catalog = Catalog::builder().register::<HelloArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let router = McpServer::<Actor>::new(executor, "protected", "0")
        .http_router(Protected(metadata.clone()), HttpOptions::default());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let url = format!("{origin}/mcp");

    let challenge = |response: &reqwest::Response| {
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let anonymous = reqwest::Client::new()
        .post(&url)
        .body(initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(
        challenge(&anonymous),
        format!("Bearer resource_metadata=\"{}\"", metadata.url())
    );
    let expired = post(&url, "old", initialize()).await;
    assert_eq!(expired.status(), 401);
    assert!(challenge(&expired).contains("error=\"invalid_token\""));
    assert!(challenge(&expired).contains("error_description=\"the token has expired\""));

    for at in [
        metadata.url(),
        format!("{origin}/.well-known/oauth-protected-resource"),
    ] {
        let served: Value = reqwest::get(&at).await.unwrap().json().await.unwrap();
        assert_eq!(served["resource"], format!("{origin}/mcp"), "{at}");
        assert_eq!(
            served["authorization_servers"],
            json!(["https://login.example.com"])
        );
        assert_eq!(served["scopes_supported"], json!(["tools"]));
    }
    assert_eq!(post(&url, "good", initialize()).await.status(), 200);
}

#[tokio::test]
async fn an_anonymous_endpoint_caps_sessions_in_all_not_per_principal() {
    let options = HttpOptions::default().max_sessions(3, 1);
    let url = serve(options, toolwright::mcp::allow_anonymous(Actor("guest"))).await;
    // Every caller is the same guest: one session each would shut out all
    // but the first client.
    for _ in 0..3 {
        open_session(&url, "any").await;
    }
    assert_eq!(post(&url, "any", initialize()).await.status(), 503);
}

#[tokio::test]
async fn respelling_a_token_does_not_open_more_sessions_than_its_cap() {
    // No `.principal::<C>()`: sessions are owned by their credentials.
    let catalog = Catalog::builder().register::<HelloArgs>().build().unwrap();
    let executor = Executor::builder(catalog, Container::default())
        .build()
        .unwrap();
    let options = HttpOptions::default().max_sessions(10, 2);
    let url = serve_executor(executor, options, authenticate).await;
    let initialize_as = |authorization: &'static str| {
        without_credentials(reqwest::Method::POST, &url)
            .header("authorization", authorization)
            .body(initialize())
            .send()
    };
    assert_eq!(initialize_as("Bearer ada-1").await.unwrap().status(), 200);
    assert_eq!(initialize_as("bearer  ada-1").await.unwrap().status(), 200);
    // The same token in any other spelling is the same owner, at its cap.
    for spelling in ["BEARER ada-1", "bEaReR   ada-1 ", "Bearer    ada-1"] {
        let response = initialize_as(spelling).await.unwrap();
        assert_eq!(response.status(), 429, "{spelling}");
    }
}

#[tokio::test]
async fn paths_the_server_does_not_serve_are_404_without_credentials() {
    // No OAuth metadata: nothing under /.well-known either.
    let url = serve(HttpOptions::default(), authenticate).await;
    let root = url.trim_end_matches("/mcp");
    for path in [
        "/",
        "/nope",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
    ] {
        let response = reqwest::get(format!("{root}{path}")).await.unwrap();
        assert_eq!(response.status(), 404, "{path}");
    }
    // The endpoint itself still asks for credentials.
    let response = without_credentials(reqwest::Method::POST, &url)
        .body(initialize())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
}

#[tokio::test]
async fn a_request_for_a_host_not_allowed_is_403_before_credentials() {
    let url = serve(HttpOptions::default(), authenticate).await;
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let port = addr.rsplit(':').next().unwrap();
    let status = |host: Option<String>, token: &'static str| {
        let body = initialize();
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nauthorization: Bearer {token}\r\n\
             content-type: application/json\r\naccept: application/json, text/event-stream\r\n\
             content-length: {}\r\nconnection: close\r\n",
            body.len()
        );
        if let Some(host) = host {
            head += &format!("host: {host}\r\norigin: http://{host}\r\n");
        }
        async move {
            let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
            socket
                .write_all(format!("{head}\r\n{body}").as_bytes())
                .await
                .unwrap();
            // The status line only: a 200 goes on as an event stream.
            let mut answer = Vec::new();
            while !answer.ends_with(b"\r\n") {
                answer.push(socket.read_u8().await.unwrap());
            }
            let answer = String::from_utf8(answer).unwrap();
            answer.split(' ').nth(1).unwrap_or_default().to_owned()
        }
    };
    // A rebinding page on evil.example, with or without a token.
    let evil = format!("evil.example:{port}");
    assert_eq!(status(Some(evil.clone()), "nobody").await, "403");
    assert_eq!(status(Some(evil), "ada-1").await, "403");
    assert_eq!(status(None, "ada-1").await, "400");
    // The loopback names are served, and ask for credentials as before.
    assert_eq!(
        status(Some(format!("localhost:{port}")), "nobody").await,
        "401"
    );
    assert_eq!(status(Some(format!("[::1]:{port}")), "ada-1").await, "200");
}

/// #39: a client of the 2026-07-28 protocol was told `tools.listChanged`,
/// but its `subscriptions/listen` was refused, so it never heard a change.
/// Over Streamable HTTP the request is acknowledged on its event stream,
/// and a change to the caller's tools is announced there.
#[tokio::test]
async fn a_2026_07_28_listen_request_hears_tool_list_changes_on_its_stream() {
    let catalog = Catalog::builder().register::<HelloArgs>().build().unwrap();
    let executor = Executor::builder(catalog, Container::default())
        .principal::<Actor>()
        .build()
        .unwrap();
    let url = serve_executor(executor.clone(), HttpOptions::default(), authenticate).await;
    let listen = json!({
        "jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    });
    let mut stream = reqwest::Client::new()
        .post(&url)
        .header("authorization", "Bearer ada-1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(listen.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let mut seen = String::new();
    let mut next_event = async || {
        loop {
            if let Some(end) = seen.find("\n\n") {
                let event: String = seen.drain(..end + 2).collect();
                if let Some(data) = event.lines().find_map(|line| line.strip_prefix("data:")) {
                    return serde_json::from_str::<Value>(data.trim()).unwrap();
                }
                continue;
            }
            let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
                .await
                .expect("an event within 5 s")
                .unwrap()
                .expect("the stream is open");
            seen.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    };
    let acknowledged = next_event().await;
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["toolsListChanged"],
        true
    );
    executor
        .registry()
        .disable(
            &toolwright::registry::Selector::name("hello"),
            "maintenance",
        )
        .unwrap();
    let changed = next_event().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
}

//! The MCP adapter, driven by rmcp's own client: in process over a duplex
//! stream, and over Streamable HTTP on loopback.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ServiceExt, object};
use serde::Serialize;
use serde_json::{Value, json};
mod mcp_client;

use mcp_client::{call, connect, text, tool_names};
use toolwright::mcp::{
    HttpOptions, McpServer, McpServerBuilder, Rejection, approval_request, bearer_token,
};
use toolwright::{
    Catalog, Container, Context, Executor, Inject, Invocation,
    approval::Digest,
    executor::Verdict,
    registry::{DynamicTool, Registry, Selector, View},
    scope::{Outcome, ResolveError, Scope},
    tool,
};

/// Who is calling.
#[derive(Clone)]
struct Actor {
    name: &'static str,
    admin: bool,
    approved: Arc<Mutex<HashSet<Digest>>>,
}

impl Actor {
    fn new(name: &'static str, admin: bool) -> Self {
        Actor {
            name,
            admin,
            approved: Arc::default(),
        }
    }
}

async fn anyone<A>(_: &Actor, _: &Invocation<'_, A>) -> bool {
    true
}

async fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.admin
}

async fn person_approved<A>(actor: &Actor, call: &Invocation<'_, A>) -> Verdict {
    if actor.approved.lock().unwrap().remove(&call.digest()) {
        Verdict::Allow
    } else {
        Verdict::Pending
    }
}

#[derive(Serialize, schemars::JsonSchema)]
struct Weather {
    city: String,
    celsius: i32,
}

/// Current weather in a city.
#[tool(key = "weather.get", title = "Weather", effect = read, authorize = anyone)]
async fn get_weather(
    /// The city.
    #[schemars(length(min = 1))]
    city: String,
) -> Weather {
    Weather { city, celsius: 21 }
}

/// Who is calling.
#[tool(key = "session.whoami", effect = read, authorize = anyone)]
async fn whoami(actor: Context<Actor>) -> String {
    actor.name.to_owned()
}

#[derive(Serialize, schemars::JsonSchema)]
struct Page {
    text: String,
}

/// Read a page of the manual, longer than its 16-character bound.
#[tool(key = "docs.page", effect = read, max_result = 16, authorize = anyone)]
async fn read_page() -> Page {
    Page {
        text: "word ".repeat(20),
    }
}

/// Read the manual's notes; a model is shown their first 16 characters.
#[tool(key = "docs.notes", effect = read, max_result = 16, authorize = anyone)]
async fn read_notes() -> String {
    "note ".repeat(20)
}

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = anyone)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Delete everything.
#[tool(key = "admin.wipe", effect = destructive, authorize = admins, approve = person_approved)]
async fn wipe() -> bool {
    true
}

/// Rename a city.
#[tool(key = "cities.rename", effect = write, authorize = anyone, approve = person_approved)]
async fn rename_city(from: String, to: String) -> String {
    format!("{from} is now {to}")
}

#[derive(Debug)]
struct Boom;

impl std::fmt::Display for Boom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection string postgres://secret@db")
    }
}

impl std::error::Error for Boom {}

/// Always fails.
#[tool(key = "debug.fail", effect = read, authorize = anyone)]
async fn fail() -> Result<u8, Boom> {
    Err(Boom)
}

/// Always panics.
#[tool(key = "debug.panic", effect = read, authorize = anyone)]
async fn explode() -> u8 {
    panic!("secret panic detail")
}

/// Takes too long.
#[tool(key = "debug.slow", effect = read, authorize = anyone, timeout = "50ms")]
async fn too_slow() -> u8 {
    tokio::time::sleep(Duration::from_secs(60)).await;
    0
}

/// A unit of work whose closing the tests watch.
struct Work;

/// Waits until cancelled, inside a unit of work.
#[tool(key = "debug.wait", effect = read, authorize = anyone)]
async fn wait_forever(_work: Inject<Work>) -> u8 {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    0
}

type Closes = Arc<Mutex<Vec<Outcome>>>;

fn test_server() -> (McpServer<Actor>, Closes) {
    let (server, closes) = test_builder();
    let server = server
        .views(|actor: &Actor| {
            if actor.admin {
                View::new(Selector::All)
            } else {
                View::new(!Selector::key("admin.wipe"))
            }
        })
        .build();
    (server, closes)
}

/// The test server's settings, before its views.
fn test_builder() -> (McpServerBuilder<Actor>, Closes) {
    let closes: Closes = Arc::default();
    let seen = closes.clone();
    let container = Container::builder()
        .request::<Work>(move |scope: Scope| {
            let seen = seen.clone();
            async move {
                scope.on_close(move |outcome| async move { seen.lock().unwrap().push(outcome) });
                Ok::<_, ResolveError>(Work)
            }
        })
        .build();
    let catalog = Catalog::discover().unwrap();
    let executor = Executor::new(catalog, container).unwrap();
    let server = McpServer::builder(executor, "toolwright-test", "0.1.0");
    (server, closes)
}

#[tokio::test]
async fn lists_tools_with_schemas_and_annotations() {
    let (server, _) = test_server();
    let client = connect(&server, Actor::new("ada", true)).await;
    let tools = client.list_all_tools().await.unwrap();
    let listed = serde_json::to_value(&tools).unwrap();
    let weather = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get_weather")
        .unwrap();
    assert_eq!(weather["title"], "Weather");
    assert_eq!(weather["description"], "Current weather in a city.");
    assert_eq!(weather["inputSchema"]["type"], "object");
    assert_eq!(weather["inputSchema"]["required"], json!(["city"]));
    assert!(weather["inputSchema"].get("$schema").is_none());
    assert_eq!(weather["outputSchema"]["type"], "object");
    assert_eq!(
        weather["annotations"],
        json!({"title": "Weather", "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false})
    );
    let wipe = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "wipe")
        .unwrap();
    assert_eq!(wipe["annotations"]["destructiveHint"], true);
    assert_eq!(wipe["annotations"]["readOnlyHint"], false);
    // A non-object result is advertised wrapped.
    let add = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "add")
        .unwrap();
    assert_eq!(
        add["outputSchema"]["properties"]["result"]["type"],
        "integer"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn visibility_hides_tools_per_caller() {
    let (server, _) = test_server();
    let client = connect(&server, Actor::new("bob", false)).await;
    let names = tool_names(&client).await;
    assert!(!names.contains(&"wipe".to_owned()), "{names:?}");
    assert!(names.contains(&"add".to_owned()));
    // A hidden tool cannot be called either: it does not exist for bob.
    let error = client
        .call_tool(CallToolRequestParams::new("wipe"))
        .await
        .unwrap_err();
    assert!(matches!(error, ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn calls_return_structured_content_and_text() {
    let (server, _) = test_server();
    let client = connect(&server, Actor::new("ada", true)).await;
    let weather = call(&client, "get_weather", json!({"city": "Lyon"})).await;
    assert_eq!(weather.is_error, Some(false));
    assert_eq!(
        weather.structured_content,
        Some(json!({"city": "Lyon", "celsius": 21}))
    );
    assert_eq!(
        serde_json::from_str::<Value>(&text(&weather)).unwrap(),
        json!({"city": "Lyon", "celsius": 21})
    );
    let sum = call(&client, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));
    assert_eq!(text(&sum), "5");
    client.cancel().await.unwrap();
}

/// #39: `max_result` bounded the text but not `structuredContent`, which
/// went out whole. A structured result over the bound is cut where a cut
/// value still matches the output schema (a plain string), and is an
/// error naming the bound where it would not (an object).
#[tokio::test]
async fn a_long_result_is_cut_where_its_schema_allows_and_an_error_where_not() {
    let (server, _) = test_server();
    let client = connect(&server, Actor::new("ada", true)).await;
    let page = call(&client, "read_page", json!({})).await;
    assert_eq!(page.is_error, Some(true));
    assert_eq!(page.structured_content, None);
    let refused = text(&page);
    assert!(refused.contains("limit of 16 characters"), "{refused}");
    assert!(!refused.contains("word"), "{refused}");

    let notes = call(&client, "read_notes", json!({})).await;
    assert_eq!(notes.is_error, Some(false));
    let cut = format!("{}…[84 more characters]", "note ".repeat(3) + "n");
    assert_eq!(text(&notes), cut);
    assert_eq!(notes.structured_content, Some(json!({"result": cut})));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_error_class_is_a_safe_is_error_result() {
    let (server, _) = test_server();
    let client = connect(&server, Actor::new("bob", false)).await;
    let cases = [
        ("add", json!({"a": "two", "b": 3}), "Invalid arguments: /a"),
        (
            "add",
            json!({"a": 1, "b": 2, "sudo": true}),
            "Invalid arguments",
        ),
        ("fail", json!({}), "The tool failed."),
        ("explode", json!({}), "The tool failed."),
        ("too_slow", json!({}), "The tool did not finish in time."),
    ];
    for (name, args, expected) in cases {
        let result = call(&client, name, args.clone()).await;
        assert_eq!(result.is_error, Some(true), "{name} {args}");
        let message = text(&result);
        assert!(message.starts_with(expected), "{name}: {message}");
        assert!(!message.contains("secret"), "{name} leaks: {message}");
    }
    client.cancel().await.unwrap();

    // Denied: an admin-only tool called by someone who can see it but may not use it.
    let (everything_visible, _) = test_builder();
    let everything_visible = everything_visible
        .views(|_: &Actor| View::new(Selector::All))
        .build();
    let client = connect(&everything_visible, Actor::new("bob", false)).await;
    let denied = call(&client, "wipe", json!({})).await;
    assert_eq!(denied.is_error, Some(true));
    assert_eq!(text(&denied), "You are not allowed to call this tool.");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_unknown_tool_is_a_json_rpc_error() {
    let (server, _) = test_server();
    let client = connect(&server, Actor::new("ada", true)).await;
    let error = client
        .call_tool(CallToolRequestParams::new("nope").with_arguments(object!({})))
        .await
        .unwrap_err();
    match error {
        ServiceError::McpError(e) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("nope"));
        }
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
    client.cancel().await.unwrap();
}

/// The server's answer to `request`, sent as a raw JSON-RPC line after the
/// initialize handshake.
async fn answer_to(server: &McpServer<Actor>, request: Value) -> Value {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(Actor::new("ada", true));
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let (read, mut write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(read).lines();
    let initialize: Value = serde_json::from_str(&initialize_body()).unwrap();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    for message in [initialize, initialized, request] {
        write
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    lines
        .next_line()
        .await
        .unwrap()
        .expect("the initialize result");
    let answer = lines.next_line().await.unwrap().expect("an answer");
    serde_json::from_str(&answer).unwrap()
}

#[tokio::test]
async fn malformed_tools_call_params_are_invalid_params() {
    let (server, closes) = test_server();
    let cases = [
        json!({"arguments": {}}),
        json!({"name": 5}),
        json!({"name": "add", "arguments": [1, 2]}),
    ];
    for params in cases {
        let request = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
        let answer = answer_to(&server, request).await;
        assert_eq!(answer["id"], 2, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("invalid params for `tools/call`"),
            "{message}"
        );
    }
    let missing = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call"});
    let answer = answer_to(&server, missing).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // Params that are no object at all (`"params": "add"`) never reach the
    // server: rmcp's transport answers -32600 "Invalid request" itself.
    assert!(closes.lock().unwrap().is_empty(), "nothing ran");

    // A method the server does not have is still -32601, its name cut short.
    let method = format!("tools/{}", "x".repeat(900 * 1024));
    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": {}});
    let answer = answer_to(&server, unknown).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    assert!(answer.to_string().len() < 1024);
}

#[tokio::test]
async fn a_write_waits_for_approval_then_runs_once() {
    let (server, _) = test_server();
    let actor = Actor::new("ada", true);
    let client = connect(&server, actor.clone()).await;
    let args = json!({"from": "Lyon", "to": "Lugdunum"});
    let pending = call(&client, "rename_city", args.clone()).await;
    assert_eq!(pending.is_error, Some(true));
    let request = approval_request(&pending)
        .unwrap()
        .expect("an approval request in `_meta`");
    assert_eq!(request.key, "cities.rename");
    assert_eq!(request.name, "rename_city");
    assert_eq!(request.arguments, args);
    assert_eq!(request.digest, Digest::of("cities.rename", &args));
    assert!(text(&pending).contains("approval"));
    // `structuredContent` is only ever the tool's output, which clients
    // check against its output schema, error results included.
    assert_eq!(pending.structured_content, None);

    // A person approves exactly that call.
    actor.approved.lock().unwrap().insert(request.digest);
    let done = call(&client, "rename_city", args.clone()).await;
    assert_eq!(done.is_error, Some(false));
    assert_eq!(text(&done), "Lyon is now Lugdunum");
    // The approval was used up.
    let again = call(&client, "rename_city", args).await;
    assert_eq!(again.is_error, Some(true));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn cancelling_a_call_runs_its_finalizers_with_cancelled() {
    let (server, closes) = test_server();
    let client = connect(&server, Actor::new("ada", true)).await;
    // Dropping the request future makes the client send notifications/cancelled.
    let call = client.call_tool(CallToolRequestParams::new("wait_forever"));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err()
    );
    for _ in 0..200 {
        if !closes.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(*closes.lock().unwrap(), [Outcome::Cancelled]);
    client.cancel().await.unwrap();
}

// ---------------------------------------------------------------- HTTP

fn authenticate(parts: &http::request::Parts) -> Result<Actor, Rejection> {
    match bearer_token(&parts.headers) {
        Some("ada-token") => Ok(Actor::new("ada", true)),
        Some("bob-token") => Ok(Actor::new("bob", false)),
        _ => Err(Rejection::unauthorized()),
    }
}

async fn serve_http(options: HttpOptions) -> (String, Closes) {
    let (server, closes) = test_server();
    let router = server.http_router(authenticate, options);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, closes)
}

async fn http_client(url: &str, token: &str) -> RunningService<RoleClient, ()> {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token.to_owned()),
    );
    ().serve(transport).await.unwrap()
}

#[tokio::test]
async fn http_serves_list_and_call_with_the_callers_context() {
    for stateless in [false, true] {
        let options = HttpOptions::default()
            .stateless(stateless)
            .json_response(stateless);
        let (url, _) = serve_http(options).await;
        let ada = http_client(&url, "ada-token").await;
        let names = tool_names(&ada).await;
        assert!(names.contains(&"wipe".to_owned()));
        let sum = call(&ada, "add", json!({"a": 20, "b": 22})).await;
        assert_eq!(text(&sum), "42", "stateless: {stateless}");
        let who = call(&ada, "whoami", json!({})).await;
        assert_eq!(text(&who), "ada", "the context comes from the bearer token");
        ada.cancel().await.unwrap();

        let bob = http_client(&url, "bob-token").await;
        let names = tool_names(&bob).await;
        assert!(
            !names.contains(&"wipe".to_owned()),
            "visibility follows the token"
        );
        let who = call(&bob, "whoami", json!({})).await;
        assert_eq!(text(&who), "bob");
        // A client cannot supply the context as an argument.
        let smuggled = call(
            &bob,
            "whoami",
            json!({"actor": {"name": "ada", "admin": true}}),
        )
        .await;
        assert_eq!(smuggled.is_error, Some(true));
        bob.cancel().await.unwrap();
    }
}

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    })
    .to_string()
}

async fn post(url: &str, headers: &[(&str, &str)], body: String) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn http_without_valid_credentials_is_401_and_runs_nothing() {
    let (url, closes) = serve_http(HttpOptions::default()).await;
    for headers in [vec![], vec![("authorization", "Bearer wrong")]] {
        let response = post(&url, &headers, initialize_body()).await;
        assert_eq!(response.status(), 401);
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    // A tool call without credentials never reaches the executor.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "wait_forever", "arguments": {}}});
    let response = post(&url, &[], call.to_string()).await;
    assert_eq!(response.status(), 401);
    assert!(closes.lock().unwrap().is_empty());
    // With credentials the same endpoint answers.
    let response = post(
        &url,
        &[("authorization", "Bearer ada-token")],
        initialize_body(),
    )
    .await;
    assert_eq!(response.status(), 200);
}

#[tokio::test]
async fn http_matches_the_bearer_scheme_in_any_case() {
    let (url, _) = serve_http(HttpOptions::default()).await;
    for value in ["bearer ada-token", "BEARER ada-token", "Bearer  ada-token"] {
        let response = post(&url, &[("authorization", value)], initialize_body()).await;
        assert_eq!(response.status(), 200, "{value}");
    }
    for value in ["Basic ada-token", "Bearerada-token", "ada-token"] {
        let response = post(&url, &[("authorization", value)], initialize_body()).await;
        assert_eq!(response.status(), 401, "{value}");
    }
}

#[tokio::test]
async fn http_refuses_a_foreign_origin() {
    let (url, _) = serve_http(HttpOptions::default()).await;
    let auth = ("authorization", "Bearer ada-token");
    let foreign = post(
        &url,
        &[auth, ("origin", "https://evil.example")],
        initialize_body(),
    )
    .await;
    assert_eq!(foreign.status(), 403);
    let local = post(
        &url,
        &[auth, ("origin", "http://localhost:5173")],
        initialize_body(),
    )
    .await;
    assert_eq!(local.status(), 200);
}

#[tokio::test]
async fn http_refuses_an_oversized_body() {
    let options = HttpOptions::default().max_body_bytes(4 * 1024);
    let (url, _) = serve_http(options).await;
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"padding": "x".repeat(16 * 1024)}});
    let response = post(
        &url,
        &[("authorization", "Bearer ada-token")],
        big.to_string(),
    )
    .await;
    assert_eq!(response.status(), 413);
}

#[tokio::test]
async fn serve_http_on_a_taken_address_fails_keeping_the_os_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let (server, _) = test_server();
    let error = server
        .serve_http(
            addr,
            toolwright::mcp::allow_anonymous(Actor::new("ada", false)),
            HttpOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains(&format!("cannot bind {addr}")),
        "{error}"
    );
    let source = std::error::Error::source(&error).expect("the OS error is the source");
    let io = source
        .downcast_ref::<std::io::Error>()
        .expect("an io::Error");
    assert_eq!(io.kind(), std::io::ErrorKind::AddrInUse);
}

#[tokio::test]
async fn http_refuses_a_declared_oversized_body_before_reading_it() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let (url, _) = serve_http(HttpOptions::default().max_body_bytes(4 * 1024)).await;
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    // 100 GB declared, none of it sent: the answer must not wait for it,
    // nor for credentials.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         content-length: 100000000000\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 256];
    let read = tokio::time::timeout(Duration::from_secs(30), stream.read(&mut answer))
        .await
        .expect("the server waited for the body")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer[..read]);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
}

/// Echo a word.
#[tool(key = "util.echo", effect = read, authorize = public)]
async fn echo(word: String) -> String {
    word
}

/// The application's prompts, served beside toolwright's tools.
struct Prompts;

impl rmcp::ServerHandler for Prompts {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        let capabilities = rmcp::model::ServerCapabilities::builder()
            .enable_prompts()
            .enable_tools()
            .build();
        rmcp::model::ServerConfig::new(capabilities)
    }

    async fn list_prompts(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, rmcp::ErrorData> {
        let prompts = json!({"prompts": [{"name": "triage", "description": "Triage a bug."}]});
        Ok(serde_json::from_value(prompts).unwrap())
    }

    async fn list_tools(
        &self,
        _: Option<rmcp::model::PaginatedRequestParams>,
        _: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        panic!("a companion is never asked for tools")
    }
}

#[tokio::test]
async fn a_companion_serves_prompts_beside_the_tools_and_none_means_method_not_found() {
    let executor = || {
        let catalog = Catalog::builder().register::<EchoArgs>().build().unwrap();
        Executor::new(catalog, Container::default()).unwrap()
    };
    let alone = McpServer::new(executor(), "tools-only", "0.1.0");
    let client = connect(&alone, ()).await;
    assert!(client.peer_info().unwrap().capabilities.prompts.is_none());
    let refused = client.list_prompts(None).await.unwrap_err();
    assert!(
        matches!(&refused, ServiceError::McpError(error) if error.code == ErrorCode::METHOD_NOT_FOUND),
        "{refused:?}"
    );
    client.cancel().await.unwrap();

    let server = McpServer::builder(executor(), "with-prompts", "0.1.0")
        .companion(Prompts)
        .build();
    let client = connect(&server, ()).await;
    let capabilities = &client.peer_info().unwrap().capabilities;
    assert!(capabilities.prompts.is_some() && capabilities.tools.is_some());
    let prompts = client.list_prompts(None).await.unwrap();
    assert_eq!(prompts.prompts[0].name, "triage");
    // The tools are still toolwright's.
    assert_eq!(tool_names(&client).await, ["echo"]);
    client.cancel().await.unwrap();
}

/// Say whether the call reaches the MCP request it serves.
#[tool(key = "util.reaches", effect = read, authorize = public)]
async fn reaches_request() -> bool {
    toolwright::mcp::McpCall::current().is_some()
}

#[tokio::test]
async fn a_tool_reaches_its_mcp_request_only_on_a_server_that_lets_it() {
    let executor = || {
        let catalog = Catalog::builder()
            .register::<ReachesRequestArgs>()
            .build()
            .unwrap();
        Executor::new(catalog, Container::default()).unwrap()
    };
    let direct = executor().invoke("reaches_request", json!({}), &()).await;
    assert_eq!(direct.unwrap(), json!(false));
    for (server, reaches) in [
        (McpServer::new(executor(), "plain", "0.1.0"), "false"),
        (
            McpServer::builder(executor(), "reaching", "0.1.0")
                .mcp_calls()
                .build(),
            "true",
        ),
    ] {
        let client = connect(&server, ()).await;
        let result = call(&client, "reaches_request", json!({})).await;
        assert_eq!(text(&result), reaches);
        client.cancel().await.unwrap();
    }
}

/// A server of `count` small tools built at run time, `t0000`, `t0001`, ...
fn many_tools(count: usize) -> (Registry, Executor) {
    let registry = Registry::new(Catalog::builder().build().unwrap());
    for i in 0..count {
        let tool = DynamicTool::builder(format!("bulk.t{i:04}"), format!("t{i:04}"))
            .description("One of many.")
            .effect(toolwright::Effect::Read)
            .input_schema(json!({"type": "object"}))
            .handler(|_| Box::pin(async { Ok(json!(null)) }))
            .build()
            .unwrap();
        registry.register(tool).unwrap();
    }
    let executor = Executor::new(registry.clone(), Container::default()).unwrap();
    (registry, executor)
}

/// #39: `tools/list` had no pagination: 5,008 tools were one answer of
/// 10.7 MB. Now a page holds at most `DEFAULT_PAGE_SIZE` tools (or the
/// server's page size), and its cursor leads to the rest, each tool once.
#[tokio::test]
async fn tools_list_answers_in_pages_that_a_client_follows_to_the_end() {
    use rmcp::model::PaginatedRequestParams;
    use toolwright::mcp::DEFAULT_PAGE_SIZE;

    let (_, executor) = many_tools(DEFAULT_PAGE_SIZE + 7);
    let server = McpServer::new(executor, "bulk", "0");
    let client = connect(&server, Actor::new("ada", true)).await;
    let first = client.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), DEFAULT_PAGE_SIZE);
    let cursor = first.next_cursor.clone().expect("a next page");
    let rest = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(rest.tools.len(), 7);
    assert_eq!(rest.next_cursor, None);
    let names = tool_names(&client).await;
    let unique: HashSet<&String> = names.iter().collect();
    assert_eq!(
        (names.len(), unique.len()),
        (DEFAULT_PAGE_SIZE + 7, DEFAULT_PAGE_SIZE + 7)
    );

    let refused = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("made up".into())),
        ))
        .await
        .unwrap_err();
    assert!(matches!(refused, ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS));
    client.cancel().await.unwrap();
}

/// A cursor names the last tool of its page: a tool removed between pages
/// makes the next page neither repeat nor skip one that stayed.
#[tokio::test]
async fn a_list_that_changes_between_pages_repeats_and_skips_nothing_that_stayed() {
    use rmcp::model::PaginatedRequestParams;

    let (registry, executor) = many_tools(5);
    let server = McpServer::builder(executor, "bulk", "0")
        .page_size(2)
        .build();
    let client = connect(&server, Actor::new("ada", true)).await;
    let first = client.list_tools(None).await.unwrap();
    let names: Vec<_> = first.tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["t0000", "t0001"]);
    registry.unregister(&Selector::name("t0001")).unwrap();
    let next = client
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(first.next_cursor),
        ))
        .await
        .unwrap();
    let names: Vec<_> = next.tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["t0002", "t0003"]);
    client.cancel().await.unwrap();
}

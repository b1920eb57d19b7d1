//! The admin API over a real listener, as an operator's page (or an
//! attacker) meets it: tokens, hosts, origins, ETags, bodies, tools
//! switched off and on, approvals under four eyes, the log, and the
//! registry's state.

use std::net::SocketAddr;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use toolwright::admin::{self, Admin, Operator, ServeError};
use toolwright::approval::{LedgerError, MemoryLedger};
use toolwright::audit::SqliteAudit;
use toolwright::mcp::McpServer;
use toolwright::observe::ExecutionLog;
use toolwright::{
    CallError, Catalog, Container, Effect, Executor, Invocation, Principal,
    approval::Approvals,
    executor::{BoxFuture, Verdict},
    registry::{Arguments, DynamicTool, Policy, Registry, Rule, Selector},
    tool,
};

/// Whoever calls tools (the application's context).
struct Caller(&'static str);

impl Principal for Caller {
    fn id(&self) -> &str {
        self.0
    }
}

const ALICE_TOKEN: &str = "alice-token-0123456789abcdef";
const BOB_TOKEN: &str = "bob-token-0123456789abcdef";
/// The card number `charge` gets: it must never show in an admin answer.
const CARD: &str = "4111-1111-1111-1111";

/// Look up a product.
#[tool(key = "shop.products.get", effect = read, authorize = public, tags = ["catalog"])]
async fn get_product(id: u64) -> u64 {
    id
}

fn ledger_hook<'a>(
    caller: &'a Caller,
    call: &'a Invocation<'a, Arguments>,
) -> BoxFuture<'a, Result<Verdict, LedgerError>> {
    Box::pin(caller.approval_ledger(call))
}

/// A write whose `card` is secret (`writeOnly`), approved through the ledger.
fn charge() -> DynamicTool {
    DynamicTool::builder("payments.charge", "charge")
        .description("Charge a card.")
        .effect(Effect::Write)
        .tags(["pii"])
        .input_schema(json!({
            "type": "object",
            "properties": {
                "cents": {"type": "integer"},
                "card": {"type": "string", "writeOnly": true},
            },
            "required": ["cents", "card"],
        }))
        .approve(ledger_hook)
        .handler(|call| Box::pin(async move { Ok(json!({"charged": call.arguments()["cents"]})) }))
        .build()
        .unwrap()
}

struct Shop {
    /// The admin's mount point, e.g. `http://127.0.0.1:4711/admin`.
    root: String,
    addr: SocketAddr,
    /// The registry's generation when the shop opened.
    start: u64,
    executor: Executor,
    log: ExecutionLog,
}

impl Shop {
    async fn start() -> Shop {
        Shop::start_with(Approvals::new(MemoryLedger::new()), |admin, log| {
            admin.log(log)
        })
        .await
    }

    /// A shop with `approvals`, and the admin (alice and bob as operators,
    /// then as `configure` makes it, given the log) mounted at `/admin`.
    async fn start_with(
        approvals: Approvals,
        configure: impl FnOnce(Admin, ExecutionLog) -> Admin,
    ) -> Shop {
        Shop::start_audited(approvals, None, configure).await
    }

    /// [`Shop::start_with`], its executor recording in `trail` if given.
    async fn start_audited(
        approvals: Approvals,
        trail: Option<SqliteAudit>,
        configure: impl FnOnce(Admin, ExecutionLog) -> Admin,
    ) -> Shop {
        let registry = Registry::new(
            Catalog::builder()
                .register::<GetProductArgs>()
                .build()
                .unwrap(),
        );
        registry.register(charge()).unwrap();
        let execution_log = ExecutionLog::new(100).unwrap();
        let mut builder = Executor::builder(registry, Container::default())
            .approvals(approvals)
            .principal::<Caller>()
            .observe(execution_log.clone());
        if let Some(trail) = trail {
            builder = builder.audit(trail);
        }
        let executor = builder.build().unwrap();
        let admin = Admin::new(executor.clone())
            .operator(ALICE_TOKEN, Operator::new("alice"))
            .operator(BOB_TOKEN, Operator::new("bob"));
        let admin = configure(admin, execution_log.clone());
        let app = axum::Router::new().nest("/admin", admin.router());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Shop {
            root: format!("http://{addr}/admin"),
            addr,
            start: executor.registry().generation(),
            executor,
            log: execution_log,
        }
    }

    fn request(&self, method: Method, path: &str, token: Option<&str>) -> reqwest::RequestBuilder {
        let url = match path {
            "" => self.root.clone(),
            path => format!("{}/{path}", self.root),
        };
        let request = reqwest::Client::new().request(method, url);
        match token {
            Some(token) => request.header("authorization", format!("Bearer {token}")),
            None => request,
        }
    }

    async fn get(&self, path: &str) -> Answer {
        Answer::of(self.request(Method::GET, path, Some(ALICE_TOKEN))).await
    }

    /// A change as `token`, with `If-Match: if_match` when given.
    async fn change(
        &self,
        method: Method,
        path: &str,
        token: &str,
        if_match: Option<&str>,
        body: impl Into<String>,
    ) -> Answer {
        let mut request = self
            .request(method, path, Some(token))
            .header("content-type", "application/json")
            .body(body.into());
        if let Some(tag) = if_match {
            request = request.header("if-match", tag);
        }
        Answer::of(request).await
    }

    async fn post(&self, path: &str, token: &str, if_match: Option<&str>, body: Value) -> Answer {
        self.change(Method::POST, path, token, if_match, body.to_string())
            .await
    }

    /// The registry's ETag after `changes` changes.
    fn tag(&self, changes: u64) -> String {
        format!("\"r{}\"", self.start + changes)
    }

    /// Sends `method path` (under the mount point) with `headers`, as
    /// written, over a connection of its own: a browser's request, whose
    /// `Host` is the name the page was loaded from. Gives the status and
    /// the body.
    async fn raw(&self, method: &str, path: &str, headers: &[(&str, String)]) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let path = match path {
            "" => "/admin".to_owned(),
            path => format!("/admin/{path}"),
        };
        let mut request = format!("{method} {path} HTTP/1.1\r\n");
        for (name, value) in headers {
            request += &format!("{name}: {value}\r\n");
        }
        request += "content-length: 0\r\nconnection: close\r\n\r\n";
        let mut stream = tokio::net::TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        let status = answer
            .split(' ')
            .nth(1)
            .unwrap_or_default()
            .parse()
            .unwrap();
        let body = answer
            .split_once("\r\n\r\n")
            .unwrap_or_default()
            .1
            .to_owned();
        (status, body)
    }

    /// How many changes the registry has seen since the shop opened.
    fn changes(&self) -> u64 {
        self.executor.registry().generation() - self.start
    }
}

/// The tool names an MCP client is offered by `executor`.
async fn mcp_names(executor: &Executor) -> Vec<String> {
    use rmcp::ServiceExt as _;
    let server = McpServer::<Caller>::new(executor.clone(), "admin-test", "0");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(Caller("carol"));
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    client.cancel().await.unwrap();
    tools.iter().map(|t| t.name.to_string()).collect()
}

/// An answer, read whole.
struct Answer {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    text: String,
}

impl Answer {
    async fn of(request: reqwest::RequestBuilder) -> Answer {
        let response = request.send().await.unwrap();
        Answer {
            status: response.status(),
            headers: response.headers().clone(),
            text: response.text().await.unwrap(),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.text)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {:?} {}", self.status, self.text))
    }

    fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", |v| v.to_str().unwrap())
    }

    fn etag(&self) -> String {
        self.header("etag").to_owned()
    }

    /// The `{"error"}` text of an error answer.
    fn error(&self) -> String {
        self.json()["error"].as_str().unwrap().to_owned()
    }
}

#[tokio::test]
async fn the_page_needs_no_token_and_runs_only_its_own_files() {
    let shop = Shop::start().await;
    let page = Answer::of(shop.request(Method::GET, "", None)).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.header("content-type").starts_with("text/html"));
    let policy = page.header("content-security-policy");
    assert!(policy.contains("default-src 'self'"), "{policy}");
    assert!(!policy.contains("unsafe-inline"), "{policy}");
    assert_eq!(page.header("x-content-type-options"), "nosniff");
    assert!(page.header("set-cookie").is_empty());

    // Under `nest("/admin", …)` the page is at `/admin`: it names the mount
    // point as its base, so that its relative URLs resolve under it.
    assert!(
        page.text.contains(r#"<base href="admin/">"#),
        "{}",
        page.text
    );
    assert!(policy.contains("base-uri 'self'"), "{policy}");

    // Served at its own root (or `nest_service`d, which also routes the
    // trailing slash), it needs no base.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest_service("/ops", bare_admin().router());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let slash = Answer::of(reqwest::Client::new().get(format!("http://{addr}/ops/"))).await;
    assert_eq!(slash.status, StatusCode::OK);
    assert!(!slash.text.contains("<base"), "{}", slash.text);
    let bare = Answer::of(reqwest::Client::new().get(format!("http://{addr}/ops"))).await;
    assert!(bare.text.contains(r#"<base href="ops/">"#), "{}", bare.text);

    for (path, kind) in [("app.js", "text/javascript"), ("app.css", "text/css")] {
        let asset = Answer::of(shop.request(Method::GET, path, None)).await;
        assert_eq!(asset.status, StatusCode::OK, "{path}");
        assert!(asset.header("content-type").starts_with(kind), "{path}");
    }
}

#[tokio::test]
async fn api_requests_without_an_operators_token_are_refused() {
    let shop = Shop::start().await;
    let none = Answer::of(shop.request(Method::GET, "api/tools", None)).await;
    assert_eq!(none.status, StatusCode::UNAUTHORIZED);
    assert_eq!(none.header("www-authenticate"), "Bearer");
    assert!(none.error().contains("token"), "{}", none.text);

    let wrong = Answer::of(shop.request(Method::GET, "api/tools", Some("alice-token"))).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    let disable = Answer::of(
        shop.request(Method::POST, "api/tools/get_product/disable", Some("guess"))
            .header("if-match", shop.tag(0))
            .body(json!({"reason": "sabotage"}).to_string()),
    )
    .await;
    assert_eq!(disable.status, StatusCode::UNAUTHORIZED);
    assert_eq!(shop.changes(), 0, "nothing changed");

    let ok = shop.get("api/tools").await;
    assert_eq!(ok.status, StatusCode::OK);
    assert_eq!(ok.header("cache-control"), "no-store");
    assert_eq!(ok.header("x-content-type-options"), "nosniff");
    assert!(ok.header("access-control-allow-origin").is_empty());
}

#[tokio::test]
async fn a_page_on_a_foreign_origin_is_refused() {
    let shop = Shop::start().await;
    let foreign = Answer::of(
        shop.request(
            Method::POST,
            "api/tools/get_product/disable",
            Some(ALICE_TOKEN),
        )
        .header("origin", "http://evil.example")
        .header("if-match", shop.tag(0))
        .body(json!({"reason": "from a foreign page"}).to_string()),
    )
    .await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
    assert!(foreign.header("access-control-allow-origin").is_empty());
    assert_eq!(shop.changes(), 0, "nothing changed");

    let own = Answer::of(
        shop.request(Method::GET, "api/tools", Some(ALICE_TOKEN))
            .header("origin", format!("http://{}", shop.addr)),
    )
    .await;
    assert_eq!(own.status, StatusCode::OK);
}

#[tokio::test]
async fn a_dns_rebinding_page_is_refused_by_its_host_whatever_its_token_and_origin() {
    let shop = Shop::start().await;
    let port = shop.addr.port();
    // evil.example now resolves to 127.0.0.1: the page's requests name it
    // as their Host, and come from its own origin, which matches it.
    let rebound = |host: String| {
        [
            ("host", host.clone()),
            ("origin", format!("http://{host}")),
            ("authorization", format!("Bearer {ALICE_TOKEN}")),
            ("if-match", shop.tag(0)),
        ]
    };
    let evil = rebound(format!("evil.example:{port}"));
    let (status, body) = shop
        .raw("POST", "api/tools/get_product/enable", &evil)
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Host"), "{body}");
    let (status, _) = shop.raw("GET", "api/tools", &evil).await;
    assert_eq!(status, 403);
    // The page is refused too: a rebound name cannot even load it.
    let (status, _) = shop.raw("GET", "", &evil[..2]).await;
    assert_eq!(status, 403);
    // No Host at all: 400.
    let (status, _) = shop.raw("GET", "api/tools", &evil[2..]).await;
    assert_eq!(status, 400);

    // The same request for the admin's own loopback names is answered.
    for host in [format!("127.0.0.1:{port}"), format!("localhost:{port}")] {
        let (status, body) = shop.raw("GET", "api/tools", &rebound(host)).await;
        assert_eq!(status, 200, "{body}");
    }
}

#[tokio::test]
async fn a_configured_allowed_host_passes_and_replaces_the_loopback_names() {
    let shop = Shop::start_with(Approvals::new(MemoryLedger::new()), |admin, _| {
        admin.allowed_hosts(["ops.example.com"])
    })
    .await;
    let as_host = |host: &str| {
        [
            ("host", host.to_owned()),
            ("origin", format!("http://{host}")),
            ("authorization", format!("Bearer {ALICE_TOKEN}")),
        ]
    };
    let (status, body) = shop
        .raw("GET", "api/tools", &as_host("ops.example.com"))
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _) = shop
        .raw("GET", "api/tools", &as_host("OPS.example.com:80"))
        .await;
    assert_eq!(status, 200);
    let (status, _) = shop.raw("GET", "api/tools", &as_host("evil.example")).await;
    assert_eq!(status, 403);
    let loopback = format!("127.0.0.1:{}", shop.addr.port());
    let (status, _) = shop.raw("GET", "api/tools", &as_host(&loopback)).await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn the_tool_list_shows_every_tool_with_its_state_schemas_and_namespace() {
    let shop = Shop::start().await;
    let answer = shop.get("api/tools").await;
    assert_eq!(answer.etag(), shop.tag(0));
    let body = answer.json();
    assert_eq!(body["generation"], shop.start);
    let tools = body["tools"].as_array().unwrap();
    let product = tools.iter().find(|t| t["name"] == "get_product").unwrap();
    assert_eq!(product["key"], "shop.products.get");
    assert_eq!(product["namespace"], "shop.products");
    assert_eq!(product["effect"], "read");
    assert_eq!(product["tags"], json!(["catalog"]));
    assert_eq!(product["enabled"], true);
    assert_eq!(product["disabled"], Value::Null);
    assert_eq!(product["policy"], Value::Null);
    assert_eq!(
        product["input_schema"]["properties"]["id"]["type"],
        "integer"
    );
    assert_eq!(product["description"], "Look up a product.");

    let one = shop.get("api/tools/charge").await.json();
    assert_eq!(
        (one["effect"].clone(), one["namespace"].clone()),
        (json!("write"), json!("payments"))
    );
    let missing = shop.get("api/tools/nothing").await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert!(missing.error().contains("nothing"));
}

#[tokio::test]
async fn an_operator_defers_a_tool_and_lists_it_up_front_again() {
    let shop = Shop::start().await;
    let deferred = shop
        .post(
            "api/tools/get_product/defer",
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            json!({}),
        )
        .await;
    assert_eq!(deferred.status, StatusCode::OK, "{}", deferred.text);
    assert_eq!(deferred.json()["deferred"], true);
    assert!(shop.executor.tools().get("get_product").unwrap().deferred());
    // Kept in the state, as an override.
    let state = shop.get("api/state").await.json();
    assert_eq!(
        state["tools"]["shop.products.get"]["override"]["deferred"],
        true
    );
    // A stale page is refused; the current one goes through.
    let stale = shop
        .post(
            "api/tools/get_product/undefer",
            BOB_TOKEN,
            Some(&shop.tag(0)),
            json!({}),
        )
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let listed = shop
        .post(
            "api/tools/get_product/undefer",
            BOB_TOKEN,
            Some(&shop.tag(1)),
            json!({}),
        )
        .await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.text);
    assert_eq!(listed.json()["deferred"], false);
    assert!(!shop.executor.tools().get("get_product").unwrap().deferred());
}

#[tokio::test]
async fn a_disabled_tool_is_gone_and_refused_until_enabled_again() {
    let shop = Shop::start().await;
    let disabled = shop
        .post(
            "api/tools/get_product/disable",
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            json!({"reason": "prices are wrong"}),
        )
        .await;
    assert_eq!(disabled.status, StatusCode::OK, "{}", disabled.text);
    assert_eq!(disabled.etag(), shop.tag(1));
    let tool = disabled.json();
    assert_eq!(tool["enabled"], false);
    assert_eq!(tool["disabled"]["reason"], "prices are wrong");
    assert_eq!(tool["disabled"]["by"], "alice");
    assert!(tool["disabled"]["at"].as_u64().unwrap() > 0);

    // Gone from what every front end lists, and refused when called.
    assert!(shop.executor.tools().get("get_product").is_none());
    assert_eq!(mcp_names(&shop.executor).await, ["charge"]);
    let refused = shop
        .executor
        .invoke("get_product", json!({"id": 1}), &Caller("carol"))
        .await
        .unwrap_err();
    assert!(matches!(refused, CallError::Disabled { .. }), "{refused:?}");
    // Still listed by the admin, as disabled.
    let listed = shop.get("api/tools").await.json();
    let product = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get_product")
        .cloned();
    assert_eq!(product.unwrap()["enabled"], false);

    let enabled = shop
        .post(
            "api/tools/get_product/enable",
            BOB_TOKEN,
            Some(&shop.tag(1)),
            json!({}),
        )
        .await;
    assert_eq!(enabled.status, StatusCode::OK, "{}", enabled.text);
    assert_eq!(enabled.json()["enabled"], true);
    assert_eq!(mcp_names(&shop.executor).await, ["charge", "get_product"]);
    let answer = shop
        .executor
        .invoke("get_product", json!({"id": 1}), &Caller("carol"))
        .await
        .unwrap();
    assert_eq!(answer, 1);
}

#[tokio::test]
async fn a_change_without_a_current_if_match_changes_nothing() {
    let shop = Shop::start().await;
    let reason = json!({"reason": "maintenance"});
    let missing = shop
        .post(
            "api/tools/get_product/disable",
            ALICE_TOKEN,
            None,
            reason.clone(),
        )
        .await;
    assert_eq!(missing.status, StatusCode::PRECONDITION_REQUIRED);
    let stale = shop
        .post(
            "api/tools/get_product/disable",
            ALICE_TOKEN,
            Some(&shop.tag(7)),
            reason.clone(),
        )
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    assert!(stale.error().contains(&shop.tag(0)), "{}", stale.text);
    let weak = shop
        .post(
            "api/tools/get_product/disable",
            ALICE_TOKEN,
            Some(&format!("W/{}", shop.tag(0))),
            reason,
        )
        .await;
    assert_eq!(weak.status, StatusCode::PRECONDITION_FAILED);
    assert_eq!(shop.changes(), 0);
    assert!(shop.executor.tools().get("get_product").is_some());

    // A state import is a change too.
    let state = shop.get("api/state").await.text;
    let stale = shop
        .change(
            Method::PUT,
            "api/state",
            ALICE_TOKEN,
            Some(&shop.tag(5)),
            state.clone(),
        )
        .await;
    assert_eq!(stale.status, StatusCode::PRECONDITION_FAILED);
    let missing = shop
        .change(Method::PUT, "api/state", ALICE_TOKEN, None, state)
        .await;
    assert_eq!(missing.status, StatusCode::PRECONDITION_REQUIRED);
    assert_eq!(shop.changes(), 0);
}

#[tokio::test]
async fn bad_bodies_are_refused_and_change_nothing() {
    let shop = Shop::start().await;
    let path = "api/tools/get_product/disable";
    let huge = json!({"reason": "x".repeat(100 * 1024)}).to_string();
    let oversized = shop
        .change(Method::POST, path, ALICE_TOKEN, Some(&shop.tag(0)), huge)
        .await;
    assert_eq!(oversized.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(oversized.error().contains("larger"), "{}", oversized.text);

    for body in [
        r#"{"reason": "#,
        "[1, 2]",
        r#"{"reason": 5}"#,
        r#"{"reason": "ok", "op": "remove"}"#,
    ] {
        let answer = shop
            .change(Method::POST, path, ALICE_TOKEN, Some(&shop.tag(0)), body)
            .await;
        assert_eq!(
            answer.status,
            StatusCode::BAD_REQUEST,
            "{body}: {}",
            answer.text
        );
        assert!(!answer.error().is_empty());
    }
    let blank = shop
        .post(
            path,
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            json!({"reason": "  "}),
        )
        .await;
    assert_eq!(blank.status, StatusCode::BAD_REQUEST);
    assert!(blank.error().contains("reason"));
    let malformed_state = shop
        .change(
            Method::PUT,
            "api/state",
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            r#"{"tools": 3}"#,
        )
        .await;
    assert_eq!(malformed_state.status, StatusCode::BAD_REQUEST);
    assert_eq!(shop.changes(), 0);
}

#[tokio::test]
async fn an_oversized_body_without_a_declared_length_is_refused_too() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let shop = Shop::start().await;
    let mut stream = tokio::net::TcpStream::connect(shop.addr).await.unwrap();
    let head = format!(
        "POST /admin/api/tools/get_product/disable HTTP/1.1\r\nHost: {}\r\n\
         Authorization: Bearer {ALICE_TOKEN}\r\nIf-Match: {}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        shop.addr,
        shop.tag(0)
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let chunk = "x".repeat(16 * 1024);
    for _ in 0..5 {
        let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
        if stream.write_all(framed.as_bytes()).await.is_err() {
            break; // refused mid-body: the answer is already there
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n").await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert_eq!(shop.changes(), 0);
}

#[tokio::test]
async fn reads_answer_304_while_nothing_changed() {
    let shop = Shop::start().await;
    for path in [
        "api/tools",
        "api/tools/get_product",
        "api/state",
        "api/approvals",
        "api/log",
        "",
    ] {
        let first = shop.get(path).await;
        assert_eq!(first.status, StatusCode::OK, "{path}");
        let tag = first.etag();
        assert!(tag.starts_with('"') && tag.ends_with('"'), "{path}: {tag}");
        let again = Answer::of(
            shop.request(Method::GET, path, Some(ALICE_TOKEN))
                .header("if-none-match", &tag),
        )
        .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(again.text.is_empty());
        assert_eq!(again.etag(), tag);
    }
    // A change makes the old tag stale.
    shop.executor
        .registry()
        .disable(&toolwright::registry::Selector::All, "maintenance")
        .unwrap();
    let after = Answer::of(
        shop.request(Method::GET, "api/tools", Some(ALICE_TOKEN))
            .header("if-none-match", shop.tag(0)),
    )
    .await;
    assert_eq!(after.status, StatusCode::OK);
    assert_eq!(after.etag(), shop.tag(1));
}

/// The ETag of request `id` in a page of `api/approvals`.
fn request_tag(listed: &Answer, id: u64) -> String {
    let approvals = listed.json()["approvals"].clone();
    let approval = approvals
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("request {id} is not listed: {}", listed.text));
    approval["etag"].as_str().unwrap().to_owned()
}

/// `who` asks for a charge of `cents`: the error the call answers.
async fn asks(executor: &Executor, who: &'static str, cents: u64) -> CallError {
    let asked = executor
        .invoke(
            "charge",
            json!({"cents": cents, "card": CARD}),
            &Caller(who),
        )
        .await;
    asked.unwrap_err()
}

#[tokio::test]
async fn one_requester_flooding_writes_over_mcp_stops_at_the_cap() {
    use rmcp::ServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    let shop = Shop::start().await;
    let server = McpServer::<Caller>::new(shop.executor.clone(), "admin-test", "0");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(Caller("mallory"));
    tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let client = ().serve(client_io).await.unwrap();
    let mut told = Vec::new();
    for cents in 0..120 {
        let arguments = json!({"cents": cents, "card": CARD});
        let Value::Object(arguments) = arguments else {
            unreachable!()
        };
        let params = CallToolRequestParams::new("charge").with_arguments(arguments);
        let result = client.call_tool(params).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{result:?}");
        let content = serde_json::to_value(&result.content).unwrap();
        told.push(content[0]["text"].as_str().unwrap().to_owned());
    }
    client.cancel().await.unwrap();
    let waiting = told
        .iter()
        .filter(|t| t.contains("needs a person's approval"));
    assert_eq!(waiting.count(), 100);
    for text in &told[100..] {
        assert_eq!(
            text,
            "You already have 100 requests waiting for a person's approval, the most allowed, \
             so this call was not recorded. Tell the user; do not retry until some are decided."
        );
    }
    // The operators see the cap's worth, not the flood; others still ask.
    let pending = shop.executor.approvals().unwrap().pending().await.unwrap();
    assert_eq!(pending.len(), 100);
    assert!(pending.iter().all(|a| a.requested_by == "mallory"));
    let dave = asks(&shop.executor, "dave", 1).await;
    assert!(matches!(dave, CallError::ApprovalRequired(_)), "{dave:?}");
}

#[tokio::test]
async fn the_approvals_api_pages_by_cursor_and_shows_each_request_once() {
    let shop = Shop::start().await;
    for who in ["ann", "ben", "cat"] {
        for cents in 0..45 {
            asks(&shop.executor, who, cents).await;
        }
    }
    let (mut seen, mut after, mut pages) = (Vec::<u64>::new(), None::<u64>, 0);
    loop {
        let path = match after {
            None => "api/approvals".to_owned(),
            Some(after) => format!("api/approvals?after={after}"),
        };
        let page = shop.get(&path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.text);
        let body = page.json();
        let approvals = body["approvals"].as_array().unwrap();
        assert!(approvals.len() <= 50, "a page holds at most 50 by default");
        seen.extend(approvals.iter().map(|a| a["id"].as_u64().unwrap()));
        pages += 1;
        match body["next"].as_u64() {
            Some(next) => {
                assert_eq!(
                    Some(next),
                    seen.last().copied(),
                    "next is the last id shown"
                );
                after = Some(next);
            }
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(seen.len(), 135);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "oldest first, none twice"
    );

    // A limit is honoured up to 200; a bad one is refused.
    let small = shop.get("api/approvals?limit=7").await.json();
    assert_eq!(small["approvals"].as_array().unwrap().len(), 7);
    assert_eq!(small["next"], seen[6]);
    let large = shop.get("api/approvals?limit=100000").await.json();
    assert_eq!(large["approvals"].as_array().unwrap().len(), 135);
    assert_eq!(large["next"], Value::Null);
    for bad in ["api/approvals?limit=0", "api/approvals?after=soon"] {
        assert_eq!(shop.get(bad).await.status, StatusCode::BAD_REQUEST, "{bad}");
    }
}

#[tokio::test]
async fn a_decision_with_the_requests_etag_passes_while_another_user_keeps_asking() {
    let shop = Shop::start().await;
    let id = alice_asks(&shop).await;
    let listed = shop.get("api/approvals").await;
    let tag = request_tag(&listed, id);
    let one = shop.get(&format!("api/approvals/{id}")).await;
    assert_eq!(
        (one.etag(), one.json()["etag"].clone()),
        (tag.clone(), json!(tag))
    );

    // Mallory keeps asking, before the decision and while it is made.
    for cents in 0..5 {
        asks(&shop.executor, "mallory", cents).await;
    }
    let executor = shop.executor.clone();
    let flood = tokio::spawn(async move {
        for cents in 5..60 {
            asks(&executor, "mallory", cents).await;
            tokio::task::yield_now().await;
        }
    });
    assert_ne!(shop.get("api/approvals").await.etag(), listed.etag());

    let path = format!("api/approvals/{id}/approve");
    let approved = shop
        .post(&path, BOB_TOKEN, Some(&tag), json!({"reason": "checked"}))
        .await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.text);
    assert_eq!(approved.json()["status"], "approved");
    assert_eq!(approved.etag(), approved.json()["etag"].as_str().unwrap());
    flood.await.unwrap();

    // Its tag moved on: the request reads anew, and 304 only to the new tag.
    let decided = shop.get(&format!("api/approvals/{id}")).await;
    assert_eq!(decided.etag(), approved.etag());
    let again = Answer::of(
        shop.request(
            Method::GET,
            &format!("api/approvals/{id}"),
            Some(ALICE_TOKEN),
        )
        .header("if-none-match", approved.etag()),
    )
    .await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert_eq!(
        shop.get("api/approvals/4242").await.status,
        StatusCode::NOT_FOUND
    );
    let ran = shop
        .executor
        .invoke(
            "charge",
            json!({"cents": 500, "card": CARD}),
            &Caller("alice"),
        )
        .await;
    assert_eq!(ran.unwrap(), json!({"charged": 500}));
}

/// Alice asks for a charge: the request's id.
async fn alice_asks(shop: &Shop) -> u64 {
    let asked = shop
        .executor
        .invoke(
            "charge",
            json!({"cents": 500, "card": CARD}),
            &Caller("alice"),
        )
        .await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    request.id.unwrap().0
}

#[tokio::test]
async fn an_operator_cannot_approve_their_own_request_and_another_can() {
    let shop = Shop::start().await;
    let id = alice_asks(&shop).await;

    let listed = shop.get("api/approvals").await;
    assert!(!listed.text.contains(CARD), "{}", listed.text);
    let approvals = listed.json()["approvals"].clone();
    assert_eq!(approvals[0]["id"], id);
    assert_eq!(approvals[0]["requested_by"], "alice");
    assert_eq!(approvals[0]["status"], "pending");
    assert_eq!(approvals[0]["request"]["arguments"]["card"], "[redacted]");
    assert_eq!(approvals[0]["request"]["arguments"]["cents"], 500);
    let tag = approvals[0]["etag"].as_str().unwrap().to_owned();

    // Four eyes: alice's own token cannot approve it.
    let path = format!("api/approvals/{id}/approve");
    let own = shop
        .post(&path, ALICE_TOKEN, Some(&tag), json!({"reason": "mine"}))
        .await;
    assert_eq!(own.status, StatusCode::FORBIDDEN, "{}", own.text);
    assert!(own.error().contains("alice"), "{}", own.text);

    let approved = shop
        .post(&path, BOB_TOKEN, Some(&tag), json!({"reason": "checked"}))
        .await;
    assert_eq!(approved.status, StatusCode::OK, "{}", approved.text);
    assert!(!approved.text.contains(CARD));
    let approved = approved.json();
    assert_eq!(
        (approved["status"].clone(), approved["decided_by"].clone()),
        (json!("approved"), json!("bob"))
    );
    assert_eq!(approved["reason"], "checked");
    assert_ne!(
        approved["etag"],
        json!(tag),
        "a decided request's ETag moves on"
    );

    // The identical call now runs, once.
    let ran = shop
        .executor
        .invoke(
            "charge",
            json!({"cents": 500, "card": CARD}),
            &Caller("alice"),
        )
        .await
        .unwrap();
    assert_eq!(ran, json!({"charged": 500}));
    assert!(
        shop.get("api/approvals").await.json()["approvals"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Deciding it again: no longer pending.
    let again = shop.post(&path, BOB_TOKEN, Some(&tag), json!({})).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.text);
    let unknown = shop
        .post(
            "api/approvals/999/approve",
            BOB_TOKEN,
            Some(&tag),
            json!({}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);

    // The log holds the request, the decision and the call, never the card.
    shop.log.wait_for(3).await;
    let log = shop.get("api/log").await;
    assert!(!log.text.contains(CARD), "{}", log.text);
    assert!(log.text.contains("[redacted]"));
}

#[tokio::test]
async fn a_rejected_request_refuses_the_identical_call() {
    let shop = Shop::start().await;
    let id = alice_asks(&shop).await;
    let listed = shop.get("api/approvals").await;
    let tag = request_tag(&listed, id);
    let path = format!("api/approvals/{id}/reject");
    let missing = shop
        .post(&path, BOB_TOKEN, None, json!({"reason": "too much"}))
        .await;
    assert_eq!(missing.status, StatusCode::PRECONDITION_REQUIRED);

    // The list's ETag is not the request's: a decision names its request.
    let list = shop
        .post(
            &path,
            BOB_TOKEN,
            Some(&listed.etag()),
            json!({"reason": "too much"}),
        )
        .await;
    assert_eq!(
        list.status,
        StatusCode::PRECONDITION_FAILED,
        "{}",
        list.text
    );
    assert!(list.error().contains(&tag), "{}", list.text);

    let rejected = shop
        .post(&path, BOB_TOKEN, Some(&tag), json!({"reason": "too much"}))
        .await;
    assert_eq!(rejected.status, StatusCode::OK, "{}", rejected.text);
    assert_eq!(rejected.json()["status"], "rejected");
    let refused = shop
        .executor
        .invoke(
            "charge",
            json!({"cents": 500, "card": CARD}),
            &Caller("alice"),
        )
        .await
        .unwrap_err();
    assert!(
        !matches!(refused, CallError::ApprovalRequired(_)),
        "{refused:?}"
    );
}

#[tokio::test]
async fn the_log_pages_from_a_sequence_number() {
    let shop = Shop::start().await;
    for id in 1..=3 {
        shop.executor
            .invoke("get_product", json!({"id": id}), &Caller("carol"))
            .await
            .unwrap();
    }
    shop.log.wait_for(3).await;
    let first = shop.get("api/log?since=0&limit=2").await;
    assert_eq!(first.etag(), "\"l3-0-2\"");
    let body = first.json();
    let seqs: Vec<_> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["seq"].clone())
        .collect();
    assert_eq!(seqs, [json!(1), json!(2)]);
    assert_eq!(
        (body["next"].clone(), body["latest"].clone()),
        (json!(2), json!(3))
    );
    assert_eq!(body["entries"][0]["event"]["event"], "call");
    assert_eq!(body["entries"][0]["event"]["actor"], "carol");

    let rest = shop.get("api/log?since=2&limit=2").await.json();
    assert_eq!(rest["entries"].as_array().unwrap().len(), 1);
    assert_eq!(rest["entries"][0]["seq"], 3);
    assert_eq!(rest["next"], 3);

    // A tag names its page: the next page is no 304 under the first's tag.
    let next = Answer::of(
        shop.request(Method::GET, "api/log?since=2&limit=2", Some(ALICE_TOKEN))
            .header("if-none-match", first.etag()),
    )
    .await;
    assert_eq!(next.status, StatusCode::OK);

    // A poll with its tag answers 304 until a new entry exists.
    let caught_up = shop.get("api/log?since=3").await.etag();
    let poll = || {
        shop.request(Method::GET, "api/log?since=3", Some(ALICE_TOKEN))
            .header("if-none-match", &caught_up)
    };
    assert_eq!(Answer::of(poll()).await.status, StatusCode::NOT_MODIFIED);
    shop.executor
        .invoke("get_product", json!({"id": 4}), &Caller("carol"))
        .await
        .unwrap();
    shop.log.wait_for(4).await;
    let fresh = Answer::of(poll()).await;
    assert_eq!(fresh.status, StatusCode::OK);
    assert_eq!(fresh.json()["entries"][0]["seq"], 4);

    let bad = shop.get("api/log?since=soon").await;
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
    assert!(bad.error().contains("since"));
}

#[tokio::test]
async fn an_admin_without_a_log_answers_404_for_it() {
    let shop = Shop::start_with(Approvals::new(MemoryLedger::new()), |admin, _| admin).await;
    let answer = shop.get("api/log").await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(answer.error().contains("log"));
}

#[tokio::test]
async fn an_exported_state_imported_back_restores_the_disabled_tools() {
    let shop = Shop::start().await;
    shop.post(
        "api/tools/charge/disable",
        ALICE_TOKEN,
        Some(&shop.tag(0)),
        json!({"reason": "fraud wave"}),
    )
    .await;
    let exported = shop.get("api/state").await;
    assert_eq!(exported.etag(), shop.tag(1));
    let state = exported.json();
    assert_eq!(
        state["tools"]["payments.charge"]["disabled"]["reason"],
        "fraud wave"
    );
    assert_eq!(state["tools"]["payments.charge"]["disabled"]["by"], "alice");

    shop.post(
        "api/tools/charge/enable",
        ALICE_TOKEN,
        Some(&shop.tag(1)),
        json!({}),
    )
    .await;
    assert!(shop.executor.tools().get("charge").is_some());

    let mut imported = state.clone();
    imported["tools"]["retired.tool"] = json!({});
    let restored = shop
        .change(
            Method::PUT,
            "api/state",
            BOB_TOKEN,
            Some(&shop.tag(2)),
            imported.to_string(),
        )
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.text);
    assert_eq!(restored.etag(), shop.tag(3));
    let report = restored.json();
    assert_eq!(report["changed"], json!(["payments.charge"]));
    assert_eq!(report["unknown"], json!(["retired.tool"]));
    assert!(shop.executor.tools().get("charge").is_none());
    let disabled = shop.executor.tools().disabled("charge").cloned().unwrap();
    assert_eq!(
        (
            disabled.reason.as_str(),
            disabled.by.as_deref(),
            disabled.originally_by.as_deref()
        ),
        ("fraud wave", Some("bob"), Some("alice"))
    );
}

/// A SQLite database in memory (one connection, kept open), and the
/// audit trail in it.
async fn memory_trail() -> (sqlx::SqlitePool, SqliteAudit) {
    let pool = sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .idle_timeout(None)
        .max_lifetime(None)
        .connect("sqlite::memory:")
        .await
        .unwrap();
    let trail = SqliteAudit::connect(pool.clone()).await.unwrap();
    (pool, trail)
}

/// The audit trail's registry changes: (actor, outcome, reason, keys).
async fn registry_rows(pool: &sqlx::SqlitePool) -> Vec<(String, String, Option<String>, String)> {
    sqlx::query_as(
        "SELECT actor, outcome, reason, tool_keys FROM toolwright_audit
         WHERE kind = 'registry' ORDER BY seq",
    )
    .fetch_all(pool)
    .await
    .unwrap()
}

/// Reproduces #39's finding 7: a `PUT api/state` whose state claims that
/// someone else disabled a tool. The restore is bob's, on the tool, in
/// the log and in the audit trail; the claim stays only as "originally by".
#[tokio::test]
async fn a_restored_state_names_the_operator_who_restored_it_not_the_one_it_claims() {
    let (pool, trail) = memory_trail().await;
    let approvals = Approvals::new(MemoryLedger::new());
    let shop = Shop::start_audited(approvals, Some(trail), |admin, log| admin.log(log)).await;
    let forged = json!({
        "generation": 0,
        "tools": {"payments.charge": {"disabled": {
            "reason": "by order of the board",
            "by": "alice-the-ceo",
            "at": 0,
        }}},
    });
    let restored = shop
        .change(
            Method::PUT,
            "api/state",
            BOB_TOKEN,
            Some(&shop.tag(0)),
            forged.to_string(),
        )
        .await;
    assert_eq!(restored.status, StatusCode::OK, "{}", restored.text);
    let generation = restored.json()["generation"].clone();

    let tools = shop.get("api/tools").await.json();
    let charge = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tool| tool["name"] == "charge")
        .unwrap()
        .clone();
    assert_eq!(charge["disabled"]["by"], "bob");
    assert_eq!(charge["disabled"]["originally_by"], "alice-the-ceo");
    let state = shop.get("api/state").await.json();
    let disabled = &state["tools"]["payments.charge"]["disabled"];
    assert_eq!(
        (&disabled["by"], &disabled["originally_by"]),
        (&json!("bob"), &json!("alice-the-ceo"))
    );

    shop.log.wait_for(1).await;
    let log = shop.get("api/log?since=0").await.json();
    let change = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| &entry["event"])
        .find(|event| event["event"] == "registry" && event["generation"] == generation)
        .cloned()
        .unwrap();
    assert_eq!(change["kind"], json!({"restored": {"by": "bob"}}));
    assert_eq!(change["keys"], json!(["payments.charge"]));

    assert_eq!(
        registry_rows(&pool).await,
        [(
            "bob".into(),
            "restored".into(),
            None,
            r#"["payments.charge"]"#.into()
        )]
    );
}

#[tokio::test]
async fn an_operators_disable_and_enable_are_in_the_audit_trail_under_their_name() {
    let (pool, trail) = memory_trail().await;
    let approvals = Approvals::new(MemoryLedger::new());
    let shop = Shop::start_audited(approvals, Some(trail), |admin, _| admin).await;
    let off = json!({"reason": "refunds broken"});
    let disabled = shop
        .post(
            "api/tools/charge/disable",
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            off,
        )
        .await;
    assert_eq!(disabled.status, StatusCode::OK, "{}", disabled.text);
    let enabled = shop
        .post(
            "api/tools/charge/enable",
            BOB_TOKEN,
            Some(&shop.tag(1)),
            json!({}),
        )
        .await;
    assert_eq!(enabled.status, StatusCode::OK, "{}", enabled.text);

    let keys = || r#"["payments.charge"]"#.to_owned();
    assert_eq!(
        registry_rows(&pool).await,
        [
            (
                "alice".into(),
                "disabled".into(),
                Some("refunds broken".into()),
                keys()
            ),
            ("bob".into(), "enabled".into(), None, keys()),
        ]
    );
}

/// The registry changes in memory at once, so a change the trail cannot
/// record stands; the operator is told so.
#[tokio::test]
async fn a_change_the_audit_trail_cannot_record_stands_and_says_so() {
    let (pool, trail) = memory_trail().await;
    let approvals = Approvals::new(MemoryLedger::new());
    let shop = Shop::start_audited(approvals, Some(trail), |admin, _| admin).await;
    pool.close().await;
    let off = json!({"reason": "refunds broken"});
    let disabled = shop
        .post(
            "api/tools/charge/disable",
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            off,
        )
        .await;
    assert_eq!(disabled.status, StatusCode::SERVICE_UNAVAILABLE);
    assert!(
        disabled
            .text
            .contains("the audit trail could not record it"),
        "{}",
        disabled.text
    );
    assert_eq!(shop.executor.registry().is_enabled("charge"), Some(false));
}

#[tokio::test]
async fn each_tool_shows_what_the_policy_rules_for_it() {
    let shop = Shop::start().await;
    shop.executor.registry().set_policy(
        Policy::new()
            .rule(
                Rule::deny("no big charges", Selector::name("charge"), "over the limit")
                    .when_arguments(|args| args["cents"].as_u64() > Some(10_000)),
            )
            .rule(Rule::deny_tag("catalog")),
    );
    let tools = shop.get("api/tools").await.json();
    let policy = |name: &str| {
        let tools = tools["tools"].as_array().unwrap();
        tools.iter().find(|t| t["name"] == name).unwrap()["policy"].clone()
    };
    assert_eq!(
        policy("get_product"),
        json!({"decision": "deny", "rule": "deny tag catalog",
               "reason": "tools tagged `catalog` are not allowed"})
    );
    // A rule on the arguments decides each call of it.
    assert_eq!(
        policy("charge"),
        json!({"decision": "depends", "rule": null})
    );
}

#[tokio::test]
async fn only_operators_holding_the_approver_role_decide() {
    const CAROL_TOKEN: &str = "carol-token-0123456789abcdef";
    let approvals = Approvals::builder(MemoryLedger::new())
        .approver_role("approver")
        .build();
    let shop = Shop::start_with(approvals, |admin, _| {
        admin.operator(CAROL_TOKEN, Operator::new("carol").role("approver"))
    })
    .await;
    let id = alice_asks(&shop).await;
    let tag = request_tag(&shop.get("api/approvals").await, id);
    let path = format!("api/approvals/{id}/approve");
    let bob = shop.post(&path, BOB_TOKEN, Some(&tag), json!({})).await;
    assert_eq!(bob.status, StatusCode::FORBIDDEN, "{}", bob.text);
    assert!(bob.error().contains("approver"), "{}", bob.text);
    let carol = shop.post(&path, CAROL_TOKEN, Some(&tag), json!({})).await;
    assert_eq!(carol.status, StatusCode::OK, "{}", carol.text);
    assert_eq!(carol.json()["decided_by"], "carol");
}

#[tokio::test]
async fn an_allowed_origin_passes_and_unknown_tools_are_404() {
    let shop = Shop::start_with(Approvals::new(MemoryLedger::new()), |admin, _| {
        admin.allow_origin("https://ops.example.com")
    })
    .await;
    let allowed = Answer::of(
        shop.request(Method::GET, "api/tools", Some(ALICE_TOKEN))
            .header("origin", "https://ops.example.com"),
    )
    .await;
    assert_eq!(allowed.status, StatusCode::OK);
    assert!(allowed.header("access-control-allow-origin").is_empty());
    let other_port = Answer::of(
        shop.request(Method::GET, "api/tools", Some(ALICE_TOKEN))
            .header("origin", "https://ops.example.com:8443"),
    )
    .await;
    assert_eq!(other_port.status, StatusCode::FORBIDDEN);

    let unknown = shop
        .post(
            "api/tools/nothing/disable",
            ALICE_TOKEN,
            Some(&shop.tag(0)),
            json!({"reason": "x"}),
        )
        .await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    let nowhere = shop.get("api/nothing").await;
    assert_eq!(nowhere.status, StatusCode::NOT_FOUND);
    assert!(!nowhere.error().is_empty());
    assert_eq!(shop.changes(), 0);
}

fn bare_admin() -> Admin {
    let catalog = Catalog::builder().build().unwrap();
    Admin::new(Executor::new(catalog, Container::default()).unwrap())
}

#[tokio::test]
async fn serving_needs_loopback_unless_public_and_an_operator() {
    let admin = bare_admin().operator(ALICE_TOKEN, Operator::new("alice"));
    let error = admin::serve("0.0.0.0:0".parse().unwrap(), admin)
        .await
        .unwrap_err();
    assert!(matches!(error, ServeError::NotLoopback { .. }), "{error}");
    assert!(error.to_string().contains("Admin::public"), "{error}");

    let nobody = admin::serve("127.0.0.1:0".parse().unwrap(), bare_admin())
        .await
        .unwrap_err();
    assert!(matches!(nobody, ServeError::NoOperators), "{nobody}");

    // Served on loopback, it answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let admin = bare_admin().operator(ALICE_TOKEN, Operator::new("alice"));
    tokio::spawn(admin::serve_on(listener, admin));
    let answer = Answer::of(
        reqwest::Client::new()
            .get(format!("http://{addr}/api/tools"))
            .header("authorization", format!("Bearer {ALICE_TOKEN}")),
    )
    .await;
    assert_eq!(answer.status, StatusCode::OK);
    assert_eq!(answer.json()["tools"], json!([]));
}

#[test]
fn a_log_of_capacity_zero_is_a_clear_error() {
    let error = ExecutionLog::new(0).unwrap_err();
    assert_eq!(
        error.to_string(),
        "an execution log needs a capacity of at least one entry"
    );
}

//! The admin page in a real browser: Debian's headless Chromium driven
//! over WebDriver (chromedriver, started here on a free port) with
//! fantoccini. The page is served by the admin router of the same executor
//! that an in-process MCP client talks to and that another actor calls.
//!
//! Needs `/usr/bin/chromium` and `/usr/bin/chromedriver` (the `chromium`
//! and `chromium-driver` packages, which `.ci/run` installs; `CHROMIUM` and
//! `CHROMEDRIVER` name others). Without them the test says it is skipped,
//! and with `CI=true` it fails.
//!
//! Screenshots (1280×800 and 390×844) go to `target/admin-screenshots/`;
//! with `UPDATE_SCREENSHOT=1` the 1280×800 one also replaces `docs/admin.png`.

use std::net::{Ipv4Addr, SocketAddr, TcpListener as StdListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

mod mcp_client;

use fantoccini::wd::{Capabilities, WebDriverCompatibleCommand};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use mcp_client::{connect, tool_names};
use serde_json::{Value, json};
use toolwright::admin::{Admin, Operator};
use toolwright::approval::{LedgerError, MemoryLedger};
use toolwright::mcp::McpServer;
use toolwright::observe::ExecutionLog;
use toolwright::{
    CallError, Catalog, Container, Effect, Executor, Invocation, Principal,
    approval::Approvals,
    executor::{BoxFuture, Verdict},
    registry::{Arguments, DynamicTool, Selector},
    tool,
};

/// The operator's token, typed into the page.
const TOKEN: &str = "browser-test-token-8c1f0e5a2b7d4c6e9f3a1b2c";
/// The card number the requester sends: no sink may show it.
const SECRET: &str = "4111-1111-SECRET-0042";
/// How long the test waits for the page to show something.
const PATIENCE: Duration = Duration::from_secs(30);

/// Who calls.
#[derive(Clone)]
struct Actor(&'static str);

impl Principal for Actor {
    fn id(&self) -> &str {
        self.0
    }
}

/// Look a customer up by id.
#[tool(key = "customers.lookup", effect = read, authorize = public, tags = ["pii"])]
async fn lookup_customer(customer_id: u64) -> String {
    format!("customer {customer_id}")
}

/// List the open orders.
#[tool(key = "orders.list", effect = read, authorize = public, tags = ["orders"])]
async fn list_orders() -> Vec<u64> {
    vec![1, 2, 3]
}

/// Whether the service is up.
#[tool(key = "ping", effect = read, authorize = public)]
async fn ping() -> bool {
    true
}

fn ledger_hook<'a>(
    actor: &'a Actor,
    call: &'a Invocation<'a, Arguments>,
) -> BoxFuture<'a, Result<Verdict, LedgerError>> {
    Box::pin(actor.approval_ledger(call))
}

/// A write whose `card_number` the schema marks `writeOnly`: a secret.
fn charge_card(runs: Arc<AtomicUsize>) -> DynamicTool {
    DynamicTool::builder("billing.charge", "charge_card")
        .description("Charge an order to a card.")
        .effect(Effect::Write)
        .tags(["payments"])
        .input_schema(json!({
            "type": "object",
            "properties": {
                "order": {"type": "integer"},
                "card_number": {"type": "string", "writeOnly": true},
            },
            "required": ["order", "card_number"],
            "additionalProperties": false,
        }))
        .approve(ledger_hook)
        .handler(move |call| {
            let runs = runs.clone();
            Box::pin(async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(json!({"charged": call.arguments()["order"]}))
            })
        })
        .build()
        .unwrap()
}

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The browser and its driver, or `None` (said on one line) when they are
/// not installed outside CI.
fn browser_binaries() -> Option<(PathBuf, PathBuf)> {
    let chromium =
        std::env::var_os("CHROMIUM").map_or_else(|| "/usr/bin/chromium".into(), PathBuf::from);
    let driver = std::env::var_os("CHROMEDRIVER")
        .map_or_else(|| "/usr/bin/chromedriver".into(), PathBuf::from);
    let missing: Vec<String> = [&chromium, &driver]
        .into_iter()
        .filter(|path| !path.is_file())
        .map(|path| path.display().to_string())
        .collect();
    if missing.is_empty() {
        return Some((chromium, driver));
    }
    let missing = missing.join(" and ");
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!(
            "{missing} missing in CI: .ci/run installs the chromium and chromium-driver packages"
        );
    }
    println!("skipped: {missing} missing (apt-get install chromium chromium-driver)");
    None
}

fn free_port() -> u16 {
    StdListener::bind((Ipv4Addr::LOCALHOST, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts chromedriver and opens a headless Chromium session.
async fn open_browser(chromium: &Path, driver: &Path) -> (Client, Killed) {
    let port = free_port();
    let child = Command::new(driver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", driver.display()));
    let child = Killed(child);
    let capabilities: Capabilities = serde_json::from_value(json!({
        "browserName": "chrome",
        "goog:chromeOptions": {
            "binary": chromium,
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--window-size=1280,800", "--lang=en-US"],
        },
        // The browser's console, read back through `BrowserLog`.
        "goog:loggingPrefs": {"browser": "ALL"},
    }))
    .unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let started = Instant::now();
    loop {
        match ClientBuilder::new(HttpConnector::new())
            .capabilities(capabilities.clone())
            .connect(&url)
            .await
        {
            Ok(client) => return (client, child),
            Err(error) if started.elapsed() < PATIENCE => {
                let _ = error;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("chromedriver at {url} gave no session: {error}"),
        }
    }
}

/// chromedriver's console log (`goog:loggingPrefs`): each entry once.
#[derive(Debug)]
struct BrowserLog;

impl WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/se/log",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_owned()))
    }
}

/// Console entries that say the page's JavaScript (or its CSP) failed.
/// Network errors are left out: the 401 of a refused token and the
/// favicon's 404 are the server answering, not the page failing.
async fn console_errors(client: &Client) -> Vec<Value> {
    let entries = client.issue_cmd(BrowserLog).await.unwrap();
    entries
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|entry| entry["level"] == "SEVERE" && entry["source"] != "network")
        .collect()
}

/// Runs `script` (a JS expression's body that returns) until it returns
/// `true`, or fails with `what`.
async fn wait_until(client: &Client, what: &str, script: &str) {
    let started = Instant::now();
    loop {
        // A script that throws (the element is not there yet) is a no.
        let value = client.execute(script, vec![]).await.unwrap_or_default();
        if value == Value::Bool(true) {
            return;
        }
        if started.elapsed() > PATIENCE {
            let text = client
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap_or_default();
            panic!(
                "the page never showed {what}; it shows:\n{}",
                text.as_str().unwrap_or("")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Types `reason` into the open reason dialog and confirms.
/// Clicks the button `selector` finds, and waits for the dialog that
/// asks for the reason.
async fn ask_reason(client: &Client, selector: &str) {
    let button = client.find(Locator::Css(selector)).await.unwrap();
    button.click().await.unwrap();
    let open = "return document.getElementById('ask').open";
    wait_until(client, "the reason dialog", open).await;
}

async fn answer(client: &Client, reason: &str) {
    client
        .find(Locator::Id("ask-reason"))
        .await
        .unwrap()
        .send_keys(reason)
        .await
        .unwrap();
    client
        .find(Locator::Id("ask-ok"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Sets the filter box to `text`, as typing would.
async fn filter(client: &Client, text: &str) {
    client
        .execute(
            "const box = document.getElementById('filter');
             box.value = arguments[0];
             box.dispatchEvent(new Event('input'));",
            vec![json!(text)],
        )
        .await
        .unwrap();
}

async fn visible(client: &Client, id: &str) -> bool {
    client
        .execute(
            "const el = document.getElementById(arguments[0]); return !!el && el.offsetParent !== null;",
            vec![json!(id)],
        )
        .await
        .unwrap()
        == Value::Bool(true)
}

async fn text_of(client: &Client, css: &str) -> String {
    client
        .find(Locator::Css(css))
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// Sizes the window so that the page's viewport is `width`×`height`.
async fn viewport(client: &Client, width: u32, height: u32) {
    client.set_window_size(width, height).await.unwrap();
    let inner = client
        .execute("return [window.innerWidth, window.innerHeight]", vec![])
        .await
        .unwrap();
    let inner = |i: usize| u32::try_from(inner[i].as_u64().unwrap()).unwrap();
    let (w, h) = (inner(0), inner(1));
    if (w, h) != (width, height) {
        // The window's frame takes the difference.
        client
            .set_window_size(
                width + width.saturating_sub(w),
                height + height.saturating_sub(h),
            )
            .await
            .unwrap();
    }
    // Let the layout settle after the resize.
    client
        .execute_async(
            "requestAnimationFrame(() => requestAnimationFrame(arguments[0]))",
            vec![],
        )
        .await
        .unwrap();
}

/// A screenshot at a `width`×`height` viewport, saved in
/// `target/admin-screenshots/admin-WIDTHxHEIGHT.png`: its PNG.
async fn screenshot(client: &Client, width: u32, height: u32) -> Vec<u8> {
    viewport(client, width, height).await;
    let png = client.screenshot().await.unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("admin-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("admin-{width}x{height}.png")), &png).unwrap();
    png
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_signs_in_disables_a_tool_and_approves_a_write_in_a_browser() {
    let Some((chromium, driver)) = browser_binaries() else {
        return;
    };

    // One executor behind the admin, the MCP server and the requester.
    let runs = Arc::new(AtomicUsize::new(0));
    let log = ExecutionLog::new(1_000).unwrap();
    let catalog = Catalog::builder()
        .register::<LookupCustomerArgs>()
        .register::<ListOrdersArgs>()
        .register::<PingArgs>()
        .build()
        .unwrap();
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(catalog, Container::default())
        .approvals(approvals.clone())
        .principal::<Actor>()
        .observe(log.clone())
        .build()
        .unwrap();
    executor
        .registry()
        .register(charge_card(runs.clone()))
        .unwrap();
    let admin = Admin::new(executor.clone())
        .log(log)
        .operator(TOKEN, Operator::new("olivia").role("approver"));

    // Mounted under a prefix, as an application would: the page's URLs are
    // relative to it.
    let page = serve(admin).await;

    let mcp = McpServer::new(executor.clone(), "admin-browser", "0");
    let mcp_client = connect(&mcp, Actor("model")).await;
    assert!(
        tool_names(&mcp_client)
            .await
            .contains(&"lookup_customer".to_owned())
    );

    // More calls than one page of the log holds: the page reads them all.
    for _ in 0..150 {
        executor
            .invoke("ping", json!({}), &Actor("probe"))
            .await
            .unwrap();
    }

    let (client, _driver) = open_browser(&chromium, &driver).await;

    // 1. Without a token the page asks for one; a wrong one is refused.
    client.goto(&page).await.unwrap();
    wait_until(
        &client,
        "the sign-in form",
        "return !document.getElementById('signin').hidden",
    )
    .await;
    assert!(
        !visible(&client, "panel").await,
        "the panel shows without a token"
    );
    let token_field = client.find(Locator::Id("token")).await.unwrap();
    token_field.send_keys("not-the-token").await.unwrap();
    token_field.send_keys("\u{E007}").await.unwrap(); // Enter
    wait_until(
        &client,
        "the token refused",
        "return !document.getElementById('refused').hidden",
    )
    .await;
    assert!(text_of(&client, "#refused").await.contains("Refused"));
    assert!(!visible(&client, "panel").await);

    // 2. Signing in with the token shows the tools.
    let token_field = client.find(Locator::Id("token")).await.unwrap();
    token_field.send_keys(TOKEN).await.unwrap();
    token_field.send_keys("\u{E007}").await.unwrap();
    wait_until(
        &client,
        "the tools",
        "return document.querySelectorAll('tr[data-tool]').length === 4",
    )
    .await;
    assert!(!visible(&client, "signin").await);
    wait_until(
        &client,
        "the 150 calls in the log",
        "return document.querySelectorAll('#log-rows tr[data-kind=call]').length === 150",
    )
    .await;

    // 3. Filtering by a tag leaves the tagged tool.
    client
        .find(Locator::Id("filter"))
        .await
        .unwrap()
        .send_keys("pii")
        .await
        .unwrap();
    wait_until(
        &client,
        "only the pii tool",
        "const rows = [...document.querySelectorAll('tr[data-tool]')];
         return rows.length === 1 && rows[0].dataset.tool === 'lookup_customer';",
    )
    .await;
    let row = client
        .find(Locator::Css("tr[data-tool='lookup_customer']"))
        .await
        .unwrap();
    assert!(row.text().await.unwrap().contains("pii"));

    // Its detail shows the schema; Escape goes back to the list, and the
    // focus to the tool's button.
    row.find(Locator::Css("button.tool-name"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(
        &client,
        "the tool's detail",
        "const detail = document.getElementById('detail');
         return !detail.hidden && detail.innerText.includes('customers.lookup')
             && detail.innerText.includes('customer_id');",
    )
    .await;
    client
        .active_element()
        .await
        .unwrap()
        .send_keys("\u{E00C}") // Escape
        .await
        .unwrap();
    wait_until(
        &client,
        "the list again, focused on the tool",
        "return document.getElementById('detail').hidden
             && document.activeElement.textContent === 'lookup_customer';",
    )
    .await;

    // 4. Disabling it with a reason takes it out of MCP's tools/list. The
    // first try meets a change the application made while the operator
    // typed: refused (412), the tools reloaded, the operator told.
    let disable = "button[aria-label='Disable lookup_customer']";
    ask_reason(&client, disable).await;
    executor
        .registry()
        .disable(&Selector::name("ping"), "nightly maintenance")
        .unwrap();
    answer(&client, "leaks addresses to the model").await;
    wait_until(
        &client,
        "the stale change refused",
        "return document.getElementById('notice').innerText.includes('changed since')",
    )
    .await;
    assert!(
        executor
            .registry()
            .tools()
            .disabled("lookup_customer")
            .is_none()
    );
    filter(&client, "").await;
    wait_until(
        &client,
        "the reloaded tools",
        "const row = document.querySelector(\"tr[data-tool='ping']\");
         return !!row && row.innerText.includes('nightly maintenance');",
    )
    .await;
    filter(&client, "pii").await;

    ask_reason(&client, disable).await;
    answer(&client, "leaks addresses to the model").await;
    wait_until(
        &client,
        "the tool disabled",
        "const row = document.querySelector(\"tr[data-tool='lookup_customer']\");
         return !!row && row.classList.contains('is-disabled')
             && row.innerText.includes('leaks addresses to the model');",
    )
    .await;
    let listed = tool_names(&mcp_client).await;
    assert!(
        !listed.contains(&"lookup_customer".to_owned()),
        "{listed:?}"
    );
    assert!(listed.contains(&"list_orders".to_owned()), "{listed:?}");

    // The state export says so too.
    client
        .find(Locator::Id("state-show"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(
        &client,
        "the state as JSON",
        "const pre = document.getElementById('state-json');
         return !pre.hidden && pre.textContent.includes('leaks addresses to the model');",
    )
    .await;

    client
        .find(Locator::Id("state-show"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();

    // 5. Another actor's write waits; the operator approves it in the page.
    let arguments = json!({"order": 42, "card_number": SECRET});
    let asked = executor
        .invoke("charge_card", arguments.clone(), &Actor("alice"))
        .await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("the write should wait for approval: {asked:?}")
    };
    let id = request.id.expect("the ledger records the request");
    let card = format!("li[data-approval='{id}']");
    wait_until(
        &client,
        "the pending request",
        &format!("return !!document.querySelector(\"{card}\")"),
    )
    .await;
    let pending = text_of(&client, &card).await;
    assert!(
        pending.contains("alice") && pending.contains("[redacted]"),
        "{pending}"
    );
    assert!(
        !pending.contains(SECRET),
        "the secret shows in the page: {pending}"
    );

    // The README's screenshot: the tools, two disabled, and a pending request.
    filter(&client, "").await;
    let wide = screenshot(&client, 1280, 800).await;
    if std::env::var("UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("admin.png"), &wide).unwrap();
    }
    screenshot(&client, 390, 844).await;
    viewport(&client, 1280, 800).await;

    ask_reason(
        &client,
        &format!("button[aria-label='Approve request {id}']"),
    )
    .await;
    answer(&client, "order 42 checked").await;
    wait_until(
        &client,
        "the request gone from the pending list",
        &format!("return !document.querySelector(\"{card}\")"),
    )
    .await;

    // The requester's identical call now runs, once, and the log shows it
    // with the card number masked.
    let charged = executor
        .invoke("charge_card", arguments, &Actor("alice"))
        .await;
    assert_eq!(charged.unwrap(), json!({"charged": 42}));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    wait_until(
        &client,
        "the call in the log",
        "return [...document.querySelectorAll('#log-rows tr[data-outcome=ok]')].some(row =>
             row.innerText.includes('call charge_card') && row.innerText.includes('[redacted]'));",
    )
    .await;
    // The section links keep to the page (it carries a <base> under a
    // prefix) and move the keyboard's focus.
    client
        .find(Locator::Css("a[href='#log']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(
        &client,
        "the focus on the log",
        "return document.activeElement && document.activeElement.id === 'log'",
    )
    .await;
    assert_eq!(client.current_url().await.unwrap().path(), "/admin");

    let source = client.source().await.unwrap();
    assert!(!source.contains(SECRET), "the secret reached the page");
    assert!(source.contains("alice"));

    let errors = console_errors(&client).await;
    assert!(
        errors.is_empty(),
        "the page's JavaScript failed: {errors:#?}"
    );
    client.close().await.unwrap();
}

/// Serves `admin` under `/admin` on a new loopback listener: the page's URL.
async fn serve(admin: Admin) -> String {
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let app = axum::Router::new().nest("/admin", admin.router());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/admin")
}

/// How many pending requests the page shows, and its count beside the
/// heading.
const SHOWN_APPROVALS: &str = "return [document.querySelectorAll('li[data-approval]').length,
    document.getElementById('approvals-count').textContent,
    document.getElementById('more-approvals').offsetParent !== null]";

/// Finding 3's paging, in the page: more pending requests than one page
/// of `GET api/approvals` (50) show a page and "Show more"; the rest come
/// with it, and a request decided from the second page leaves the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_approvals_show_a_page_then_the_rest_on_show_more_and_a_decided_one_leaves() {
    let Some((chromium, driver)) = browser_binaries() else {
        return;
    };
    let runs = Arc::new(AtomicUsize::new(0));
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
        .approvals(approvals)
        .principal::<Actor>()
        .build()
        .unwrap();
    executor.registry().register(charge_card(runs)).unwrap();
    let mut ids = Vec::new();
    for order in 0..60 {
        let arguments = json!({"order": order, "card_number": SECRET});
        let asked = executor
            .invoke("charge_card", arguments, &Actor("alice"))
            .await;
        let Err(CallError::ApprovalRequired(request)) = asked else {
            panic!("the write should wait for approval: {asked:?}")
        };
        ids.push(request.id.expect("the ledger records the request"));
    }
    let admin =
        Admin::new(executor.clone()).operator(TOKEN, Operator::new("olivia").role("approver"));
    let page = serve(admin).await;

    let (client, _driver) = open_browser(&chromium, &driver).await;
    client.goto(&page).await.unwrap();
    let token_field = client.find(Locator::Id("token")).await.unwrap();
    token_field.send_keys(TOKEN).await.unwrap();
    token_field.send_keys("\u{E007}").await.unwrap(); // Enter

    // One page, the first 50 in order, and "Show more".
    wait_until(
        &client,
        "one page of requests",
        "return document.querySelectorAll('li[data-approval]').length === 50",
    )
    .await;
    let shown = client.execute(SHOWN_APPROVALS, vec![]).await.unwrap();
    assert_eq!(shown, json!([50, "(50+)", true]));
    let first: Vec<String> = ids[..50].iter().map(|id| id.to_string()).collect();
    let listed = client
        .execute(
            "return [...document.querySelectorAll('li[data-approval]')].map(li => li.dataset.approval)",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(listed, json!(first));

    // "Show more": the other ten, and no more button.
    client
        .find(Locator::Id("more-approvals"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_until(
        &client,
        "all 60 requests",
        "return document.querySelectorAll('li[data-approval]').length === 60",
    )
    .await;
    let shown = client.execute(SHOWN_APPROVALS, vec![]).await.unwrap();
    assert_eq!(shown, json!([60, "(60)", false]));

    // The last one, shown only after "Show more", rejected: it leaves, the
    // others stay.
    let last = ids[59];
    ask_reason(
        &client,
        &format!("button[aria-label='Reject request {last}']"),
    )
    .await;
    answer(&client, "not this card").await;
    wait_until(
        &client,
        "the rejected request gone",
        &format!("return !document.querySelector(\"li[data-approval='{last}']\")"),
    )
    .await;
    let shown = client.execute(SHOWN_APPROVALS, vec![]).await.unwrap();
    assert_eq!(shown, json!([59, "(59)", false]));
    assert_eq!(
        executor
            .approvals()
            .unwrap()
            .get(last)
            .await
            .unwrap()
            .status,
        toolwright::approval::Status::Rejected
    );

    let errors = console_errors(&client).await;
    assert!(
        errors.is_empty(),
        "the page's JavaScript failed: {errors:#?}"
    );
    client.close().await.unwrap();
}

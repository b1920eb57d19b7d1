//! The `shop` binary as a user runs it: `tools`, `call`, `approve`,
//! `reject`, `requests` and `serve --stdio`, each on a file database of its
//! own, with what it prints and the code it exits with. Each command is a
//! new process: what one approves, the next one finds.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// A directory of its own for one test, removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("shop-cli-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    /// The database URL of a file database in this directory.
    fn database(&self) -> String {
        format!("sqlite://{}", self.0.join("shop.db").display())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `shop <args>` in `dir`, on the database `DATABASE_URL` names (none: the
/// default).
fn shop(dir: &Path, database: Option<&str>, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shop"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("DATABASE_URL");
    if let Some(url) = database {
        command.env("DATABASE_URL", url);
    }
    command
}

/// Runs `shop <args>` on `dir`'s database; its stdout and whether it succeeded.
fn run(dir: &TempDir, args: &[&str]) -> (String, bool) {
    let Output {
        status,
        stdout,
        stderr,
    } = shop(&dir.0, Some(&dir.database()), args).output().unwrap();
    let stderr = String::from_utf8(stderr).unwrap();
    assert!(stderr.is_empty(), "shop {args:?} wrote to stderr: {stderr}");
    (String::from_utf8(stdout).unwrap(), status.success())
}

/// Runs `shop <args>` on `dir`'s database, expecting it to fail; what it
/// wrote to stderr.
fn refused(dir: &TempDir, args: &[&str]) -> String {
    let output = shop(&dir.0, Some(&dir.database()), args).output().unwrap();
    assert!(!output.status.success(), "shop {args:?} succeeded");
    String::from_utf8(output.stderr).unwrap()
}

/// `shop call <tool> <arguments> --as <who>`.
fn call(dir: &TempDir, tool: &str, arguments: &str, who: &str) -> (String, bool) {
    run(dir, &["call", tool, arguments, "--as", who])
}

/// The request's id in the `approve with: shop approve <id> --as <manager>`
/// line of a call that waits for approval.
fn id_in(printed: &str) -> &str {
    printed
        .split_once("approve with: shop approve ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no request id in {printed:?}"))
}

const ORDER: &str = r#"{"tenant_id":1,"product_id":1,"quantity":2}"#;

#[test]
fn tools_prints_every_tool_as_a_table() {
    let dir = TempDir::new("table");
    let (printed, ok) = run(&dir, &["tools"]);
    assert!(ok);
    let lines: Vec<Vec<&str>> = printed
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["tool", "key", "effect", "inputs"]);
    let place = lines
        .iter()
        .find(|row| row.first() == Some(&"place_order"))
        .unwrap_or_else(|| panic!("no place_order row in\n{printed}"));
    assert_eq!(place[1..3], ["orders.place", "write"]);
    let mut inputs: Vec<&str> = place[3..].iter().map(|i| i.trim_end_matches(',')).collect();
    inputs.sort_unstable();
    assert_eq!(
        inputs,
        ["product_id", "quantity", "tenant_id"],
        "injected parameters are not inputs"
    );
    let tools: Vec<&str> = lines[2..].iter().map(|row| row[0]).collect();
    assert_eq!(
        tools,
        [
            "cancel_order",
            "place_order",
            "quote",
            "set_price",
            "get_product",
            "list_products"
        ],
        "sorted by key"
    );
}

#[test]
fn tools_with_a_format_prints_the_tool_list_for_that_provider() {
    let dir = TempDir::new("format");
    let (printed, ok) = run(&dir, &["tools", "--format", "openai-strict"]);
    assert!(ok);
    let tools: Value = serde_json::from_str(&printed).unwrap();
    let tools = tools.as_array().unwrap();
    assert_eq!(tools.len(), 6);
    let place = tools
        .iter()
        .find(|t| t["function"]["name"] == "place_order")
        .unwrap();
    assert_eq!(place["type"], "function");
    assert_eq!(place["function"]["strict"], true);
    let parameters = &place["function"]["parameters"];
    assert_eq!(parameters["additionalProperties"], false);
    let mut required: Vec<&str> = parameters["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    required.sort_unstable();
    assert_eq!(required, ["product_id", "quantity", "tenant_id"]);
}

#[test]
fn a_write_waits_for_a_managers_approval_then_runs_once() {
    let dir = TempDir::new("approve");
    let (printed, ok) = call(&dir, "place_order", ORDER, "alice");
    assert!(!ok, "a call that waits for approval exits with a failure");
    assert!(
        printed.starts_with(
            r#"needs approval: orders.place {"product_id":1,"quantity":2,"tenant_id":1}"#
        ),
        "{printed}"
    );
    let id = id_in(&printed).to_owned();
    assert_eq!(
        printed,
        format!(
            "needs approval: orders.place {{\"product_id\":1,\"quantity\":2,\"tenant_id\":1}}\n  approve with: shop approve {id} --as <manager>\n"
        )
    );

    // Not the requester, who is no manager; not a manager of another tenant.
    assert_eq!(
        refused(&dir, &["approve", &id, "--as", "alice"]),
        format!("shop: approval {id} was requested by `alice`, who cannot also decide it\n")
    );
    assert_eq!(
        refused(&dir, &["approve", &id, "--as", "carol"]),
        format!(
            "shop: approval request {id} was made in another tenant; only its own managers decide it\n"
        )
    );

    let (printed, ok) = run(&dir, &["approve", &id, "--as", "bob"]);
    assert!(ok);
    assert_eq!(
        printed,
        format!(
            "approved request {id} (orders.place {{\"product_id\":1,\"quantity\":2,\"tenant_id\":1}}, asked by alice); alice's identical call will now run once\n"
        )
    );
    assert_eq!(
        refused(&dir, &["approve", &id, "--as", "dave"]),
        format!("shop: approval {id} is approved, not pending\n"),
        "decided once"
    );

    // The same call, its keys in another order, runs once.
    let (printed, ok) = call(
        &dir,
        "place_order",
        r#"{"quantity":2,"product_id":1,"tenant_id":1}"#,
        "alice",
    );
    assert!(ok, "{printed}");
    let order: Value = serde_json::from_str(printed.strip_prefix("ok: ").unwrap()).unwrap();
    assert_eq!(order["placed_by"], "alice");
    assert_eq!(order["total_cents"], 9998);

    // A replay needs approval again: a new request.
    let (printed, ok) = call(&dir, "place_order", ORDER, "alice");
    assert!(!ok);
    assert_ne!(id_in(&printed), id);
}

#[test]
fn a_non_manager_cannot_approve_and_a_manager_not_their_own_request() {
    let dir = TempDir::new("four-eyes");
    let price = r#"{"tenant_id":1,"product_id":3,"price_cents":2750}"#;
    let (printed, ok) = call(&dir, "set_price", price, "bob");
    assert!(!ok);
    let id = id_in(&printed).to_owned();

    assert_eq!(
        refused(&dir, &["approve", &id, "--as", "alice"]),
        "shop: `alice` cannot decide approvals: that takes the role `manager`\n"
    );
    assert_eq!(
        refused(&dir, &["approve", &id, "--as", "bob"]),
        format!("shop: approval {id} was requested by `bob`, who cannot also decide it\n")
    );
    assert!(run(&dir, &["approve", &id, "--as", "dave"]).1);

    let (printed, ok) = call(&dir, "set_price", price, "bob");
    assert!(ok, "{printed}");
    assert_eq!(
        printed,
        "ok: {\"new_cents\":2750,\"old_cents\":2500,\"product_id\":3}\n"
    );
}

#[test]
fn requests_lists_what_waits_and_a_rejected_call_is_refused() {
    let dir = TempDir::new("requests");
    assert_eq!(
        run(&dir, &["requests"]),
        ("no requests wait for approval\n".to_owned(), true)
    );
    let (printed, _) = call(&dir, "place_order", ORDER, "alice");
    let order = id_in(&printed).to_owned();
    let cancel = r#"{"tenant_id":1,"order_id":7}"#;
    let (printed, _) = call(&dir, "cancel_order", cancel, "alice");
    let cancellation = id_in(&printed).to_owned();

    let (printed, ok) = run(&dir, &["requests"]);
    assert!(ok);
    let rows: Vec<Vec<&str>> = printed
        .lines()
        .map(|line| line.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["id", "tool", "arguments", "requested", "by"]);
    assert_eq!(
        rows[2..],
        [
            vec![
                order.as_str(),
                "place_order",
                r#"{"product_id":1,"quantity":2,"tenant_id":1}"#,
                "alice"
            ],
            vec![
                cancellation.as_str(),
                "cancel_order",
                r#"{"order_id":7,"tenant_id":1}"#,
                "alice"
            ],
        ]
    );

    let (printed, ok) = run(
        &dir,
        &["reject", &order, "--as", "bob", "--reason", "two will do"],
    );
    assert!(ok);
    assert!(
        printed.starts_with(&format!("rejected request {order} ")),
        "{printed}"
    );
    let (printed, ok) = call(&dir, "place_order", ORDER, "alice");
    assert!(!ok);
    assert_eq!(
        printed,
        "refused: the call to `orders.place` was not approved\n"
    );

    // Only the cancellation still waits.
    let (printed, _) = run(&dir, &["requests"]);
    assert_eq!(printed.lines().count(), 3, "{printed}");
    assert!(printed.contains("cancel_order"), "{printed}");
}

#[test]
fn call_prints_a_read_a_refusal_and_a_failure() {
    let dir = TempDir::new("call");
    let (printed, ok) = call(&dir, "list_products", r#"{"search":"Rocket"}"#, "alice");
    assert!(ok);
    let products: Value = serde_json::from_str(printed.strip_prefix("ok: ").unwrap()).unwrap();
    assert_eq!(products.as_array().unwrap().len(), 1);
    assert_eq!(products[0]["sku"], "ACME-ROCKET");

    // carol is of tenant 2; the product is tenant 1's.
    let (printed, ok) = call(
        &dir,
        "get_product",
        r#"{"tenant_id":1,"product_id":1}"#,
        "carol",
    );
    assert!(!ok);
    assert!(printed.starts_with("refused: "), "{printed}");
    assert!(printed.contains("products.get"), "{printed}");

    let (printed, ok) = call(
        &dir,
        "place_order",
        r#"{"tenant_id":1,"product_id":1,"quantity":0}"#,
        "alice",
    );
    assert!(!ok);
    assert!(
        printed.starts_with("refused: invalid arguments"),
        "{printed}"
    );
    assert!(printed.contains("/quantity"), "{printed}");

    // Approved, but only 3 in stock: the order is rolled back.
    let too_many = r#"{"tenant_id":1,"product_id":2,"quantity":5}"#;
    let (printed, _) = call(&dir, "place_order", too_many, "alice");
    let id = id_in(&printed).to_owned();
    assert!(run(&dir, &["approve", &id, "--as", "bob"]).1);
    let (printed, ok) = call(&dir, "place_order", too_many, "alice");
    assert!(!ok);
    assert_eq!(printed, "failed, nothing was written: only 3 in stock\n");
}

#[test]
fn without_a_database_url_the_shop_keeps_its_data_in_dot_shop() {
    let dir = TempDir::new("default");
    let output = shop(
        &dir.0,
        None,
        &["call", "list_products", "{}", "--as", "bob"],
    )
    .output()
    .unwrap();
    assert!(output.status.success());
    assert!(dir.0.join(".shop/shop.db").is_file());
}

/// A `shop serve --stdio` process and the lines it writes.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    fn start(dir: &TempDir, actor: &str) -> Server {
        let mut child = shop(
            &dir.0,
            Some(&dir.database()),
            &["serve", "--stdio", "--as", actor],
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if send.send(line.unwrap()).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits for the response with its id.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no answer to {method}"));
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                assert!(message.get("error").is_none(), "{message}");
                return message["result"].clone();
            }
        }
    }

    fn call(&mut self, id: u64, name: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_stdio_speaks_mcp_as_the_given_actor() {
    let dir = TempDir::new("serve");
    let mut server = Server::start(&dir, "alice");

    let init = server.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "cli-test", "version": "0"}}),
    );
    assert_eq!(init["serverInfo"]["name"], "shop");
    assert!(init["instructions"].as_str().unwrap().contains("approval"));
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = server.request(2, "tools/list", json!({}));
    let tools = list["tools"].as_array().unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    // alice is not a manager: her view leaves the price tool out.
    assert_eq!(
        names,
        [
            "cancel_order",
            "get_product",
            "list_products",
            "place_order",
            "quote"
        ]
    );
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!(tool("list_products")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("cancel_order")["annotations"]["destructiveHint"], true);
    let place = tool("place_order");
    assert_eq!(place["annotations"]["readOnlyHint"], false);
    let inputs = place["inputSchema"]["properties"].as_object().unwrap();
    assert!(!inputs.contains_key("orders") && !inputs.contains_key("caller"));

    // A read, as alice: tenant 1's products only.
    let products = server.call(3, "list_products", json!({}));
    assert_ne!(products["isError"], true, "{products}");
    let skus: Vec<&str> = products["structuredContent"]["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["sku"].as_str().unwrap())
        .collect();
    assert_eq!(skus, ["ACME-ANVIL", "ACME-ROCKET", "ACME-MAGNET"]);

    // A write waits; the request to approve, with its id, is in `_meta`.
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 2});
    let waiting = server.call(4, "place_order", order.clone());
    assert_eq!(waiting["isError"], true);
    assert!(
        waiting["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("approval"),
        "{waiting}"
    );
    let request = &waiting["_meta"]["toolwright/approvalRequired"];
    assert_eq!(request["key"], "orders.place");
    assert_eq!(request["arguments"], order);
    assert_eq!(request["requested_by"], "alice");
    let id = request["id"].as_u64().unwrap().to_string();

    // `requests` in another process lists it; a manager approves it there.
    assert!(run(&dir, &["requests"]).0.contains("place_order"));
    assert!(run(&dir, &["approve", &id, "--as", "bob"]).1);
    let placed = server.call(5, "place_order", order);
    assert_ne!(placed["isError"], true, "{placed}");
    assert_eq!(placed["structuredContent"]["placed_by"], "alice");
    assert_eq!(placed["structuredContent"]["total_cents"], 9998);

    // Closing stdin ends the session, and the process with it.
    drop(server.stdin.take());
    for _ in 0..300 {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success());
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("shop serve --stdio did not exit after its stdin closed");
}

//! The official MCP SDKs drive the quickstart's MCP server over stdio and
//! over Streamable HTTP: list, a read call with structured output, a denied
//! call, invalid arguments, and a write that needs approval (recorded once,
//! for the caller, with an id to decide it by). The Python SDK
//! also hears `notifications/tools/list_changed` from an in-process server
//! and lists again.
//!
//! - Python: `mcp` from PyPI, pinned in `tests/python/requirements.txt`,
//!   installed into a virtualenv under the target directory.
//! - TypeScript: `@modelcontextprotocol/sdk` from npm, pinned in
//!   `tests/node/package-lock.json`, installed with `npm ci` under the
//!   target directory. It is the client of most desktop hosts and editors,
//!   and stricter than the Python one: it checks `structuredContent`
//!   against the tool's output schema on error results too.
//!
//! Each SDK is installed on the first run (its registry must be reachable
//! then) and reused while its pins are unchanged.

use std::io::BufRead;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::middleware::{self, Next};
use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::{Catalog, Container, Executor, registry::Selector, tool};

mod installs;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A virtualenv with the pinned SDK.
fn python_with_sdk() -> PathBuf {
    installs::python_with_mcp_sdk().unwrap_or_else(|why| panic!("{why}"))
}

/// The pinned TypeScript SDK, installed beside a copy of the client script
/// (Node resolves its imports from the script's directory).
fn node_client() -> PathBuf {
    let dir = installs::npm_ci(
        &manifest_dir().join("node"),
        "node-mcp",
        &["quickstart_client.mjs"],
    )
    .unwrap_or_else(|why| panic!("{why}"));
    dir.join("quickstart_client.mjs")
}

/// Kills the process when the test ends, passed or not.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http_server(binary: &str) -> (Process, String) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let child = Command::new(binary)
        .args(["--http", &addr])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let server = Process(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            Instant::now() < deadline,
            "the server did not start on {addr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, format!("http://{addr}/mcp"))
}

/// Runs a client against the quickstart over stdio and over HTTP, and
/// checks that it reports every check passed.
fn drive_quickstart(client: &mut Command) {
    let binary = env!("CARGO_BIN_EXE_quickstart-server");
    let (_server, url) = start_http_server(binary);
    let output = client.args([binary, &url]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

#[test]
fn the_python_sdk_drives_the_quickstart_over_stdio_and_http() {
    drive_quickstart(
        Command::new(python_with_sdk()).arg(manifest_dir().join("python/quickstart_client.py")),
    );
}

#[test]
fn the_typescript_sdk_drives_the_quickstart_over_stdio_and_http() {
    drive_quickstart(Command::new("node").arg(node_client()));
}

/// Read a note.
#[tool(key = "notes.read", effect = read, authorize = public)]
async fn read_note(id: u64) -> String {
    format!("note {id}")
}

/// Look up the weather.
#[tool(key = "weather.get", effect = read, authorize = public)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_hears_that_the_tool_list_changed_and_lists_again() {
    let test = "the_python_sdk_hears_that_the_tool_list_changed_and_lists_again";
    let Some(python) = tokio::task::spawn_blocking(|| installs::python_or_skip(test))
        .await
        .unwrap()
    else {
        return;
    };
    let catalog = Catalog::builder()
        .register::<ReadNoteArgs>()
        .register::<WeatherArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let registry = executor.registry().clone();
    let server = McpServer::<()>::new(executor, "list-changed", "0.1.0");

    // The notification travels on the client's standalone GET stream: the
    // test changes the registry once that stream is open.
    let (opened, mut stream_open) = tokio::sync::watch::channel(false);
    let router = server
        .http_router(allow_anonymous(()), HttpOptions::default())
        .layer(middleware::from_fn(move |request: Request, next: Next| {
            let opened = opened.clone();
            async move {
                let get = request.method() == http::Method::GET;
                let response = next.run(request).await;
                if get && response.status().is_success() {
                    opened.send_replace(true);
                }
                response
            }
        }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let mut child = Command::new(python)
        .arg(manifest_dir().join("python/list_changed_client.py"))
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (line, mut lines) = tokio::sync::mpsc::unbounded_channel();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for read in stdout.lines().map_while(Result::ok) {
            let _ = line.send(read);
        }
    });
    let mut client = Process(child);

    let mut output = Vec::new();
    while !output.iter().any(|l: &String| l.starts_with("listed: ")) {
        match lines.recv().await {
            Some(read) => output.push(read),
            None => panic!(
                "the client ended early: {output:?}\n{}",
                stderr(&mut client)
            ),
        }
    }
    stream_open.wait_for(|open| *open).await.unwrap();
    registry
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    while let Some(read) = lines.recv().await {
        output.push(read);
    }
    let status = client.0.wait().unwrap();
    assert!(status.success(), "{output:?}\n{}", stderr(&mut client));
    assert_eq!(
        output,
        [
            "capability listChanged: True",
            "listed: read_note,weather",
            "notified",
            "relisted: read_note",
            "notifications: 1",
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_listens_for_tool_list_changes_on_a_stateless_server() {
    let test = "the_python_sdk_listens_for_tool_list_changes_on_a_stateless_server";
    let Some(python) = tokio::task::spawn_blocking(|| installs::python_or_skip(test))
        .await
        .unwrap()
    else {
        return;
    };
    let catalog = Catalog::builder()
        .register::<ReadNoteArgs>()
        .register::<WeatherArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let registry = executor.registry().clone();
    let server = McpServer::<()>::new(executor, "stateless", "0.1.0");
    // As a replica behind a load balancer: no session, JSON answers.
    let options = HttpOptions::default().stateless(true).json_response(true);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));

    let mut child = Command::new(python)
        .arg(manifest_dir().join("python/listen_client.py"))
        .arg(&url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (line, mut lines) = tokio::sync::mpsc::unbounded_channel();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for read in stdout.lines().map_while(Result::ok) {
            let _ = line.send(read);
        }
    });
    let mut client = Process(child);
    let mut output = Vec::new();
    while output.last().map(String::as_str) != Some("listening") {
        match lines.recv().await {
            Some(read) => output.push(read),
            None => panic!(
                "the client ended early: {output:?}\n{}",
                stderr(&mut client)
            ),
        }
    }
    registry
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    while let Some(read) = lines.recv().await {
        output.push(read);
    }
    let status = client.0.wait().unwrap();
    assert!(status.success(), "{output:?}\n{}", stderr(&mut client));
    assert_eq!(
        output,
        [
            "listed: read_note,weather",
            "version: 2026-07-28",
            "listening",
            "notified",
            "relisted: read_note",
        ]
    );
}

fn stderr(process: &mut Process) -> String {
    let mut text = String::new();
    if let Some(mut stderr) = process.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
    }
    text
}

use toolwright::Principal;

/// The person at the MCP client, who may approve their own agent's calls.
#[derive(Clone)]
struct Person(&'static str);

impl Principal for Person {
    fn id(&self) -> &str {
        self.0
    }
}

/// Delete a note.
#[tool(key = "notes.delete", effect = destructive, authorize = public,
       approve = Person::approval_ledger)]
async fn delete_note(id: u64, deleted: toolwright::Inject<std::sync::atomic::AtomicUsize>) -> u64 {
    deleted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    id
}

/// What the Python client printed for `answer`, the ledger's requests
/// afterwards, and how many times the tool body ran.
async fn approve_in_the_client(
    python: PathBuf,
    answer: &str,
) -> (Vec<String>, Vec<toolwright::approval::Approval>, usize) {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use toolwright::approval::Approvals;
    use toolwright::approval::{MemoryLedger, Status};

    let deleted = Arc::new(AtomicUsize::new(0));
    let approvals = Approvals::builder(MemoryLedger::new())
        .allow_self_approval()
        .build();
    let catalog = Catalog::builder()
        .register::<DeleteNoteArgs>()
        .build()
        .unwrap();
    let container = Container::builder()
        .app::<AtomicUsize>(deleted.clone())
        .build();
    let executor = Executor::builder(catalog, container)
        .approvals(approvals.clone())
        .build()
        .unwrap();
    let server = McpServer::<Person>::builder(executor, "notes", "0.1.0")
        .elicitation(Duration::from_secs(30))
        .build();
    let router = server.http_router(allow_anonymous(Person("ann")), HttpOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });

    let answer = answer.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(manifest_dir().join("python/elicitation_client.py"))
            .args([url.as_str(), &answer, "delete_note", r#"{"id": 7}"#])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut requests = Vec::new();
    for status in [Status::Pending, Status::Rejected, Status::Settled] {
        requests.extend(
            approvals
                .ledger()
                .list(status, std::time::SystemTime::now())
                .await
                .unwrap(),
        );
    }
    let lines = stdout.lines().map(str::to_owned).collect();
    (lines, requests, deleted.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_approves_in_the_python_client_and_the_call_runs_once() {
    use toolwright::approval::{Settlement, Status};
    let test = "a_person_approves_in_the_python_client_and_the_call_runs_once";
    let Some(python) = tokio::task::spawn_blocking(|| installs::python_or_skip(test))
        .await
        .unwrap()
    else {
        return;
    };
    let (output, requests, runs) = approve_in_the_client(python, "accept").await;
    let digest = toolwright::approval::Digest::of("notes.delete", &serde_json::json!({"id": 7}));
    assert_eq!(
        output,
        [
            format!("asked: tool: delete_note (notes.delete) | digest: {digest}"),
            "result: ok 7".to_owned(),
        ]
    );
    assert_eq!(runs, 1);
    let [approval] = &requests[..] else {
        panic!("{requests:?}")
    };
    assert_eq!(approval.status, Status::Settled);
    assert_eq!(approval.settlement, Some(Settlement::Succeeded));
    assert_eq!(approval.decided_by.as_deref(), Some("ann"));
    assert_eq!(approval.reason.as_deref(), Some("accepted by the test"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_declines_in_the_python_client_and_nothing_runs() {
    use toolwright::approval::Status;
    let test = "a_person_declines_in_the_python_client_and_nothing_runs";
    let Some(python) = tokio::task::spawn_blocking(|| installs::python_or_skip(test))
        .await
        .unwrap()
    else {
        return;
    };
    let (output, requests, runs) = approve_in_the_client(python, "decline").await;
    assert_eq!(output.len(), 2, "{output:?}");
    assert!(
        output[0].starts_with("asked: tool: delete_note"),
        "{output:?}"
    );
    assert_eq!(output[1], "result: error The call was not approved.");
    assert_eq!(runs, 0);
    let [approval] = &requests[..] else {
        panic!("{requests:?}")
    };
    assert_eq!(approval.status, Status::Rejected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_elicitation_gets_the_waiting_result_with_its_request() {
    use toolwright::approval::Status;
    let test = "a_client_without_elicitation_gets_the_waiting_result_with_its_request";
    let Some(python) = tokio::task::spawn_blocking(|| installs::python_or_skip(test))
        .await
        .unwrap()
    else {
        return;
    };
    let (output, requests, runs) = approve_in_the_client(python, "none").await;
    assert_eq!(runs, 0);
    let [approval] = &requests[..] else {
        panic!("{requests:?}")
    };
    assert_eq!(approval.status, Status::Pending);
    assert_eq!(output.len(), 2, "{output:?}");
    assert!(output[0].starts_with("result: error "), "{output:?}");
    assert_eq!(output[1], format!("request id: {}", approval.id));
}

#[test]
fn the_quickstart_asks_the_person_in_the_python_client_to_approve_a_write() {
    let test = "the_quickstart_asks_the_person_in_the_python_client_to_approve_a_write";
    let Some(python) = installs::python_or_skip(test) else {
        return;
    };
    let target = format!("stdio:{}", env!("CARGO_BIN_EXE_quickstart-server"));
    let output = Command::new(python)
        .arg(manifest_dir().join("python/elicitation_client.py"))
        .args([
            &target,
            "accept",
            "add_task",
            r#"{"title": "water the plants"}"#,
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("asked: tool: add_task (tasks.add) | digest: "),
        "{stdout}"
    );
    assert!(lines[1].starts_with("result: ok "), "{stdout}");
    assert!(lines[1].contains("water the plants (by local)"), "{stdout}");
}

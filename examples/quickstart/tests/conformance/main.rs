//! Official MCP tools drive the quickstart's MCP server over Streamable
//! HTTP on loopback:
//!
//! - the MCP conformance suite (`@modelcontextprotocol/conformance`) runs
//!   its default server scenarios against the server `--http ADDR
//!   --anonymous` serves, since the suite sends no credentials, with the
//!   reference server's fixtures it calls added ([`fixtures`]): built from
//!   the quickstart's library in this process, as the fixtures are no part
//!   of the example;
//! - MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`) lists
//!   and calls tools of the quickstart's binary with a bearer token, and is
//!   refused without one; in the 2026-07-28 era too, where it opens a
//!   `subscriptions/listen` stream that the server takes.
//!
//! Both need Node 22 (the suite calls `fs.globSync`; the Inspector asks
//! for 22.19), which comes from npm too, as the `node` package. All three
//! are pinned in `tests/node/package-lock.json` and installed with `npm ci`
//! under the target directory on the first run (npm's registry must be
//! reachable then), and reused while the lock file is unchanged.

mod fixtures;

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolwright::approval::MemoryLedger;
use toolwright::{BoxError, approval::Approvals};

/// The default scenarios (`conformance server --url URL`, suite `active`)
/// of conformance 0.1.16, all of which the quickstart passes with the
/// fixtures: resources, prompts, completions and logging
/// levels from a companion rmcp handler; fixture tools whose result is
/// text, some of which log, report progress, or ask the client for a
/// sampling or elicitations through `McpCall`; and those whose result is an
/// image, audio, a document or all three (`Contents`).
const SCENARIOS: [&str; 30] = [
    "server-initialize",
    "ping",
    "tools-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "logging-set-level",
    "completion-complete",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-logging",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
];

#[test]
fn the_conformance_suites_default_scenarios_all_pass() {
    let test = "the_conformance_suites_default_scenarios_all_pass";
    let Some(npm) = npm_or_skip(test) else {
        return;
    };
    let url = serve_with_fixtures();
    let results = fresh_dir("conformance").join("results");

    // The suite fails when any scenario fails.
    let started = Instant::now();
    let run = bounded(
        Command::new(npm.node())
            .arg(npm.bin("conformance"))
            .args(["server", "--url", &url, "--output-dir"])
            .arg(&results),
        Duration::from_secs(300),
    )
    .unwrap_or_else(|why| panic!("{why}"));
    println!("{}\n({:.1?})", run.stdout, started.elapsed());
    assert!(run.status.success(), "{run}");

    // It ran every default scenario, and every check of each passed.
    let checks = checks_by_scenario(&results);
    let ran: Vec<&str> = checks.iter().map(|(name, _)| name.as_str()).collect();
    let mut expected = SCENARIOS.to_vec();
    expected.sort_unstable();
    assert_eq!(ran, expected);
    for (scenario, checks) in &checks {
        let failures: Vec<&Value> = checks
            .iter()
            .filter(|check| check["status"] != "SUCCESS" && check["status"] != "INFO")
            .collect();
        assert!(failures.is_empty(), "{scenario}: {failures:#?}");
    }
}

/// The quickstart's MCP server as `--http ADDR --anonymous` serves it,
/// with the suite's fixtures, on a free loopback port of this process for
/// as long as it runs; its URL.
fn serve_with_fixtures() -> String {
    let addr = free_loopback_addr();
    let serving = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let approvals = Approvals::builder(MemoryLedger::new())
                .allow_self_approval()
                .build();
            let executor = quickstart::executor(approvals)?;
            fixtures::register_tools(executor.registry())?;
            let server = fixtures::with_fixtures(quickstart::mcp_server(executor));
            quickstart::serve_anonymous(server, addr).await
        })
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(addr).is_err() {
        if serving.is_finished() {
            let ended: Result<(), BoxError> = serving.join().unwrap();
            panic!("the quickstart did not serve on {addr}: {ended:?}");
        }
        assert!(
            Instant::now() < deadline,
            "the quickstart did not start on {addr}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    format!("http://{addr}/mcp")
}

/// Each scenario's checks, by scenario name, sorted: the suite writes
/// them to `results/server-SCENARIO-TIMESTAMP/checks.json`.
fn checks_by_scenario(results: &Path) -> Vec<(String, Vec<Value>)> {
    let mut scenarios = Vec::new();
    for entry in std::fs::read_dir(results).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_str().unwrap();
        // Then `-` and an ISO timestamp with `-` for `:` and `.`.
        let scenario = &name["server-".len()..name.len() - "-2026-01-01T00-00-00-000Z".len()];
        let checks = std::fs::read_to_string(dir.join("checks.json")).unwrap();
        let checks = serde_json::from_str(&checks).unwrap();
        scenarios.push((scenario.to_owned(), checks));
    }
    scenarios.sort_by(|a, b| a.0.cmp(&b.0));
    scenarios
}

#[test]
fn the_inspector_cli_lists_and_calls_the_tools_a_bearer_token_may_see() {
    let test = "the_inspector_cli_lists_and_calls_the_tools_a_bearer_token_may_see";
    let Some(npm) = npm_or_skip(test) else {
        return;
    };
    let server = Server::start();
    let names = |token: &str| {
        let listed = inspector(npm, &server, Some(token), &["--method", "tools/list"]);
        let tools = listed["result"]["tools"].as_array().unwrap().iter();
        tools
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        names("ada-token"),
        ["add_task", "clear_tasks", "delete_task", "list_tasks"]
    );
    // Not an administrator: the admin-tagged tool is not shown.
    assert_eq!(
        names("bob-token"),
        ["add_task", "delete_task", "list_tasks"]
    );

    let called = inspector(
        npm,
        &server,
        Some("bob-token"),
        &["--method", "tools/call", "--tool-name", "list_tasks"],
    );
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(called["result"]["structuredContent"], json!({"result": []}));
}

#[test]
fn the_inspector_cli_without_a_valid_bearer_token_is_refused() {
    let test = "the_inspector_cli_without_a_valid_bearer_token_is_refused";
    let Some(npm) = npm_or_skip(test) else {
        return;
    };
    let server = Server::start();
    for token in [None, Some("mallory-token")] {
        let refused = inspector(npm, &server, token, &["--method", "tools/list"]);
        // The server's 401, as the Inspector reports it.
        assert_eq!(
            refused,
            json!({"error": {
                "code": "auth_required",
                "message": "Error POSTing to endpoint: Unauthorized"
            }}),
            "{token:?}"
        );
    }
}

#[test]
fn the_inspector_cli_of_the_2026_07_28_era_lists_calls_and_listens_for_list_changes() {
    let test = "the_inspector_cli_of_the_2026_07_28_era_lists_calls_and_listens_for_list_changes";
    let Some(npm) = npm_or_skip(test) else {
        return;
    };
    let server = Server::start_logging("debug");
    let modern = |token: &str, args: &[&str]| {
        let args = [&["--protocol-era", "modern"], args].concat();
        inspector(npm, &server, Some(token), &args)
    };

    let initialized = modern("ada-token", &["--method", "initialize"]);
    assert_eq!(initialized["result"]["protocolVersion"], "2026-07-28");
    assert_eq!(
        initialized["result"]["capabilities"]["tools"],
        json!({"listChanged": true})
    );

    let listed = modern("bob-token", &["--method", "tools/list"]);
    let names = listed["result"]["tools"].as_array().unwrap().iter();
    let names: Vec<_> = names.map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add_task", "delete_task", "list_tasks"], "{listed}");

    let called = modern(
        "bob-token",
        &["--method", "tools/call", "--tool-name", "list_tasks"],
    );
    assert_eq!(called["result"]["isError"], false, "{called}");
    assert_eq!(called["result"]["structuredContent"], json!({"result": []}));

    // On connect, a client of this era opens a `subscriptions/listen`
    // stream for the `listChanged` the server advertises; the server took
    // it (a refused one would leave no such line).
    assert!(
        server
            .log()
            .contains("a subscriptions/listen stream hears tool list changes"),
        "{}",
        server.log()
    );
}

/// Runs the Inspector's CLI against `server` with `args`, as `token`'s
/// bearer, and returns the JSON it printed: `{"result": …}` on stdout
/// when it succeeded, `{"error": …}` on stderr when not.
fn inspector(npm: &NpmTools, server: &Server, token: Option<&str>, args: &[&str]) -> Value {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("inspector-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = Command::new(npm.node());
    command
        .arg(npm.bin("mcp-inspector"))
        .args(["--cli", &server.url, "--transport", "http"])
        .args(args)
        // Never an interactive OAuth login (nor a browser), and no state
        // kept in the user's home.
        .args(["--stored-auth-only", "--format", "json", "--quiet"])
        .env("HOME", &home);
    if let Some(token) = token {
        command.args(["--header", &format!("Authorization: Bearer {token}")]);
    }
    let run = bounded(&mut command, Duration::from_secs(60))
        .unwrap_or_else(|why| panic!("{why}\n{}", server.log()));
    let printed = if run.status.success() {
        &run.stdout
    } else {
        &run.stderr
    };
    serde_json::from_str(printed).unwrap_or_else(|e| panic!("{e}: {run}\n{}", server.log()))
}

// ------------------------------------------------------------ the npm tools

/// Node 22 and the packages, installed under the target directory.
struct NpmTools {
    dir: PathBuf,
}

impl NpmTools {
    fn node(&self) -> PathBuf {
        self.dir.join("node_modules/.bin/node")
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.dir.join("node_modules/.bin").join(name)
    }
}

/// The pinned packages, installed once per test process (the tests run
/// in parallel and share them), or why they could not be.
fn npm_tools() -> &'static Result<NpmTools, String> {
    static TOOLS: OnceLock<Result<NpmTools, String>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/node");
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("node-conformance");
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(source.join(file), dir.join(file)).unwrap();
        }
        installed_once(&dir, &source.join("package-lock.json"), || {
            let install = bounded(
                Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund", "--silent"])
                    .current_dir(&dir),
                Duration::from_secs(600),
            )?;
            if install.status.success() {
                Ok(())
            } else {
                Err(format!("npm ci failed: {install}"))
            }
        })?;
        Ok(NpmTools { dir })
    })
}

/// The pinned packages, or `None` after a one-line message when they
/// cannot be set up here (no npm, no registry). On CI (`CI=true`) that
/// fails the test instead.
fn npm_or_skip(test: &str) -> Option<&'static NpmTools> {
    match npm_tools() {
        Ok(tools) => Some(tools),
        Err(why) if std::env::var("CI").as_deref() != Ok("true") => {
            eprintln!("skipped {test}: the pinned npm packages are unavailable ({why})");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

/// Runs `install` into `dir` unless it last ran there for the same `pins`
/// (a lock file), which a stamp in `dir` records.
fn installed_once(
    dir: &Path,
    pins: &Path,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    // Under nextest each test is a process of its own: a file lock, not
    // only the `OnceLock`, keeps two of them from installing at once.
    let lock = std::fs::File::create(dir.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    let pinned = std::fs::read_to_string(pins).unwrap();
    let stamp = dir.join("installed.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(pinned.as_str()) {
        install()?;
        std::fs::write(&stamp, pinned).unwrap();
    }
    Ok(())
}

// ------------------------------------------------------------ the processes

/// Kills the process when the test ends, passed or not.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a finished command printed.
struct Run {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n{}\n{}", self.status, self.stdout, self.stderr)
    }
}

/// Runs `command` to its end, or kills it after `timeout`.
fn bounded(command: &mut Command, timeout: Duration) -> Result<Run, String> {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    let mut process = Process(child);
    // Both pipes are read while the command runs, or it blocks on a full one.
    let stdout = read_all(process.0.stdout.take().unwrap());
    let stderr = read_all(process.0.stderr.take().unwrap());
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = process.0.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            drop(process);
            return Err(format!("{command:?} did not end within {timeout:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ok(Run {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    })
}

fn read_all(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}

/// An empty directory of this name under the target directory.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A loopback address whose port was free a moment ago.
fn free_loopback_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// The quickstart's binary serving MCP over HTTP on a free loopback port,
/// until dropped.
struct Server {
    _process: Process,
    url: String,
    log: PathBuf,
}

impl Server {
    /// Starts `quickstart --http 127.0.0.1:PORT`.
    fn start() -> Server {
        Server::start_logging("warn")
    }

    /// Starts `quickstart --http 127.0.0.1:PORT`, logging at `level` (its
    /// `RUST_LOG`).
    fn start_logging(level: &str) -> Server {
        let addr = free_loopback_addr();
        let port = addr.port();
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("quickstart-{port}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_quickstart"))
            .args(["--http", &addr.to_string()])
            .env("RUST_LOG", level)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut process = Process(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(addr).is_err() {
            let exited = process.0.try_wait().unwrap();
            assert!(
                exited.is_none() && Instant::now() < deadline,
                "the quickstart did not start on {addr} ({exited:?}):\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Server {
            _process: process,
            url: format!("http://{addr}/mcp"),
            log,
        }
    }

    /// What the quickstart wrote to stderr, for failure messages.
    fn log(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        format!("quickstart's stderr:\n{log}")
    }
}

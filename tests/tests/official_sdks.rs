//! The official MCP SDKs drive the quickstart's MCP server over stdio and
//! over Streamable HTTP: list, a read call with structured output, a denied
//! call, invalid arguments, and a write that needs approval.
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

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A virtualenv with the pinned SDK.
fn python_with_sdk() -> PathBuf {
    let requirements = manifest_dir().join("python/requirements.txt");
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-mcp");
    installed_once(&venv, &requirements, || {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
        run(Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements));
    });
    venv.join("bin/python")
}

/// The pinned TypeScript SDK, installed beside a copy of the client script
/// (Node resolves its imports from the script's directory).
fn node_client() -> PathBuf {
    let source = manifest_dir().join("node");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("node-mcp");
    std::fs::create_dir_all(&dir).unwrap();
    for file in ["package.json", "package-lock.json", "quickstart_client.mjs"] {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    installed_once(&dir, &source.join("package-lock.json"), || {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--silent"])
            .current_dir(&dir));
    });
    dir.join("quickstart_client.mjs")
}

/// Runs `install` into `dir` unless it last ran there for the same `pins`
/// (a requirements or lock file), which a stamp in `dir` records.
fn installed_once(dir: &Path, pins: &Path, install: impl FnOnce()) {
    let pinned = std::fs::read_to_string(pins).unwrap();
    let stamp = dir.join("installed.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(pinned.as_str()) {
        install();
        std::fs::write(&stamp, pinned).unwrap();
    }
}

fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(status.success(), "{command:?} failed: {status}");
}

/// Kills the server when the test ends, passed or not.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http_server(binary: &str) -> (Server, String) {
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
    let server = Server(child);
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

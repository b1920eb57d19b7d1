//! The official Python MCP SDK (`mcp` from PyPI, pinned in
//! `tests/python/requirements.txt`) drives the quickstart's MCP server over
//! stdio and over Streamable HTTP: list, a read call with structured output,
//! a denied call, invalid arguments, and a write that needs approval.
//!
//! The SDK is installed into a virtualenv under the target directory on the
//! first run (PyPI must be reachable then) and reused afterwards.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A virtualenv with the pinned SDK; built once per requirements file.
fn python_with_sdk() -> PathBuf {
    let requirements = manifest_dir().join("python/requirements.txt");
    let pinned = std::fs::read_to_string(&requirements).unwrap();
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-mcp");
    let python = venv.join("bin/python");
    let stamp = venv.join("installed.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() == Some(pinned.as_str()) {
        return python;
    }
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    run(Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(&requirements));
    std::fs::write(&stamp, pinned).unwrap();
    python
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

#[test]
fn the_python_sdk_drives_the_quickstart_over_stdio_and_http() {
    let python = python_with_sdk();
    let binary = env!("CARGO_BIN_EXE_quickstart-server");
    let (_server, url) = start_http_server(binary);
    let output = Command::new(python)
        .arg(manifest_dir().join("python/quickstart_client.py"))
        .args([binary, &url])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains(" passed, 0 failed"), "{stdout}");
}

//! `shop serve --http ... --admin ...` as an operator runs it: the admin's
//! URL and a fresh token printed at start, the API open to that token only,
//! and an address other machines reach refused without `--public`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

/// A directory of its own for one test, removed when the test ends.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("shop-admin-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `shop serve` process, killed when the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn shop(dir: &TempDir, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shop"));
    command.args(args).current_dir(&dir.0).env(
        "DATABASE_URL",
        format!("sqlite://{}", dir.0.join("shop.db").display()),
    );
    command
}

/// Starts the shop with an admin on a port the system picks; the admin's
/// base URL (`http://127.0.0.1:PORT/`) and token, as it printed them.
fn start(dir: &TempDir) -> (Server, String, String) {
    let mut child = shop(
        dir,
        &["serve", "--http", "127.0.0.1:0", "--admin", "127.0.0.1:0"],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    let (lines, printed) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let (mut url, mut token) = (None, None);
    let mut seen = Vec::new();
    while url.is_none() || token.is_none() {
        let Ok(line) = printed.recv_timeout(Duration::from_secs(60)) else {
            panic!("shop serve --admin printed no URL and token; it printed {seen:#?}")
        };
        if let Some(rest) = line.split_once("admin page at ").map(|(_, rest)| rest) {
            url = rest.split_whitespace().next().map(str::to_owned);
        }
        if line.starts_with("shop_admin_") {
            token = Some(line.trim().to_owned());
        }
        seen.push(line);
    }
    (server, url.unwrap(), token.unwrap())
}

/// `GET <base>api/tools` with `token` as a bearer token, if any: the status
/// code and the body.
fn get_tools(base: &str, token: Option<&str>) -> (u16, String) {
    let host = base
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix('/'))
        .unwrap_or_else(|| panic!("not a base URL: {base}"));
    let mut stream = TcpStream::connect(host).unwrap();
    let auth = token.map_or(String::new(), |token| {
        format!("Authorization: Bearer {token}\r\n")
    });
    write!(
        stream,
        "GET /api/tools HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {response}"));
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, body.to_owned())
}

#[test]
fn serve_admin_prints_a_url_and_a_fresh_token_that_opens_the_api() {
    let dir = TempDir::new("serve");
    let (_server, url, token) = start(&dir);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert_eq!(token.len(), "shop_admin_".len() + 64, "{token}");

    let (status, body) = get_tools(&url, Some(&token));
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"place_order\""), "{body}");

    let (status, _) = get_tools(&url, None);
    assert_eq!(status, 401);
    let (status, _) = get_tools(&url, Some("shop_admin_not-the-token"));
    assert_eq!(status, 401);

    // Each start makes a new token.
    let other = TempDir::new("serve-again");
    let (_again, _, second) = start(&other);
    assert_ne!(second, token);
}

#[test]
fn serve_admin_refuses_an_address_other_machines_reach_without_public() {
    let dir = TempDir::new("public");
    let output = shop(
        &dir,
        &["serve", "--http", "127.0.0.1:0", "--admin", "0.0.0.0:0"],
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("--admin 0.0.0.0:0 is not a loopback address")
            && stderr.contains("--public"),
        "{stderr}"
    );
}

#[test]
fn serve_admin_goes_with_http_not_stdio() {
    let dir = TempDir::new("stdio");
    let output = shop(&dir, &["serve", "--stdio", "--admin", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}

//! The connection limits of `McpServer::serve_http_on` and
//! `admin::serve_on`: a cap on open connections, a timeout for a request's
//! head and one for idle connections, seen from clients on loopback.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use toolwright::admin::{self, Admin, Operator};
use toolwright::mcp::{HttpOptions, McpServer, allow_anonymous};
use toolwright::{Catalog, Container, Executor, tool};

/// Longer than every timeout these tests set short.
const NAP: Duration = Duration::from_millis(1500);

/// Longer than any test waits.
const LONG: Duration = Duration::from_secs(60);

/// How long a test waits for what should happen well before.
const PATIENCE: Duration = Duration::from_secs(5);

/// Rests a while, then answers.
#[tool(key = "nap", effect = read, authorize = public)]
async fn nap() -> String {
    tokio::time::sleep(NAP).await;
    "rested".to_owned()
}

/// Serves the tools of this file on a port the system picks.
async fn serve(options: HttpOptions) -> SocketAddr {
    let executor = Executor::new(Catalog::discover().unwrap(), Container::default()).unwrap();
    let server = McpServer::<()>::new(executor, "connections-test", "0.1.0");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.serve_http_on(listener, allow_anonymous(()), options));
    addr
}

/// Serves `configure(admin)` (an admin with one operator) on a port the
/// system picks.
async fn serve_admin(configure: impl FnOnce(Admin) -> Admin) -> SocketAddr {
    let executor = Executor::new(Catalog::discover().unwrap(), Container::default()).unwrap();
    let admin = Admin::new(executor).operator("ops-token-0123456789abcdef", Operator::new("ops"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(admin::serve_on(listener, configure(admin)));
    addr
}

/// The start of a request whose head never ends.
const HALF_SENT: &[u8] = b"GET /api/tools HTTP/1.1\r\nhost: 127.0.0.1\r\n";

/// Opens `count` connections to `addr`, each sending [`HALF_SENT`].
async fn half_sent(addr: SocketAddr, count: usize) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        // A full server may have closed it already: what it did is read later.
        let _ = stream.write_all(HALF_SENT).await;
        streams.push(stream);
    }
    streams
}

/// How the server ended a connection.
#[derive(Debug, PartialEq)]
enum Ending {
    /// It answered 503 and closed.
    TooMany,
    /// It closed (or reset) the connection without a word.
    Unanswered,
}

/// Reads `stream` until the server closes it, and says how it did.
async fn ending(stream: &mut TcpStream) -> Ending {
    let mut answer = Vec::new();
    let read = tokio::time::timeout(PATIENCE, stream.read_to_end(&mut answer))
        .await
        .expect("the server kept the connection open");
    let answer = String::from_utf8_lossy(&answer);
    if answer.starts_with("HTTP/1.1 503 ") && answer.contains("too many connections") {
        return Ending::TooMany;
    }
    // A reset after the answer may lose it; with no answer, only a close.
    assert!(answer.is_empty() || read.is_err(), "{answer}");
    Ending::Unanswered
}

/// Waits for the server to close `stream`, and says how long it took.
async fn closed(stream: &mut TcpStream) -> Duration {
    let start = Instant::now();
    let mut sink = [0; 1024];
    let eof = async {
        while let Ok(read) = stream.read(&mut sink).await
            && read > 0
        {}
    };
    tokio::time::timeout(PATIENCE, eof)
        .await
        .expect("the server kept the connection open");
    start.elapsed()
}

/// Whether `stream` is still open after `wait`, the server having sent nothing.
async fn still_open_after(stream: &mut TcpStream, wait: Duration) -> bool {
    let mut byte = [0; 1];
    tokio::time::timeout(wait, stream.read(&mut byte))
        .await
        .is_err()
}

/// Sends `GET path` on `stream` and reads the answer: its status line.
async fn get(stream: &mut TcpStream, path: &str) -> String {
    let request = format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut chunk = [0; 1024];
    let head_end = loop {
        if let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let read = stream.read(&mut chunk).await.unwrap();
        assert!(read > 0, "closed before answering");
        answer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&answer[..head_end]).into_owned();
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().unwrap())
        })
        .unwrap_or(0);
    while answer.len() < head_end + length {
        let read = stream.read(&mut chunk).await.unwrap();
        assert!(read > 0, "closed in the middle of the body");
        answer.extend_from_slice(&chunk[..read]);
    }
    head.lines().next().unwrap_or_default().to_owned()
}

/// Posts a JSON-RPC `message` to `/mcp` on a new connection, in `session`;
/// gives the answer's head and the connection, to read the body from.
async fn post(addr: SocketAddr, session: Option<&str>, message: Value) -> (String, TcpStream) {
    let body = message.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\ncontent-length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request += &format!("mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n");
    }
    request += "\r\n";
    request += &body;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    // Byte by byte, to stop at the end of the head.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let byte = stream.read_u8().await.unwrap();
        head.push(byte);
    }
    (String::from_utf8(head).unwrap(), stream)
}

/// The status a fresh client (not reusing connections) gets for `GET path`.
async fn status_of(addr: SocketAddr, path: &str) -> u16 {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let response = client
        .get(format!("http://{addr}{path}"))
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test]
async fn a_request_head_sent_too_slowly_is_cut_after_the_header_timeout() {
    let options = HttpOptions::default()
        .header_timeout(Duration::from_millis(300))
        .idle_timeout(LONG);
    let addr = serve(options).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(b"GET /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let waited = closed(&mut stream).await;
    assert!(
        waited >= Duration::from_millis(200),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_idle_timeout() {
    let options = HttpOptions::default()
        .header_timeout(LONG)
        .idle_timeout(Duration::from_millis(300));
    let addr = serve(options).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let waited = closed(&mut stream).await;
    assert!(
        waited >= Duration::from_millis(200),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn a_client_idle_longer_than_the_header_timeout_may_still_send_a_request() {
    let options = HttpOptions::default()
        .header_timeout(Duration::from_millis(200))
        .idle_timeout(LONG);
    let addr = serve(options).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert!(still_open_after(&mut stream, Duration::from_secs(1)).await);
    assert_eq!(get(&mut stream, "/nowhere").await, "HTTP/1.1 404 Not Found");
}

#[tokio::test]
async fn a_keep_alive_connection_is_closed_after_the_idle_timeout_between_requests() {
    let options = HttpOptions::default()
        .header_timeout(LONG)
        .idle_timeout(Duration::from_millis(500));
    let addr = serve(options).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    assert_eq!(get(&mut stream, "/nowhere").await, "HTTP/1.1 404 Not Found");
    // Kept alive: a second request on the same connection is answered.
    assert_eq!(get(&mut stream, "/nowhere").await, "HTTP/1.1 404 Not Found");
    let waited = closed(&mut stream).await;
    assert!(
        waited >= Duration::from_millis(300),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn a_tool_call_longer_than_both_timeouts_still_gets_its_answer() {
    let timeout = Duration::from_millis(300);
    let options = HttpOptions::default()
        .header_timeout(timeout)
        .idle_timeout(timeout);
    let addr = serve(options).await;
    let (head, _) = post(
        addr,
        None,
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}
        }),
    )
    .await;
    let session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim())
        })
        .expect("a session")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (head, _) = post(addr, Some(&session), initialized).await;
    assert!(head.starts_with("HTTP/1.1 202"), "{head}");

    // The answer streams (server-sent events) on this one connection, and
    // comes after both timeouts have passed.
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "nap", "arguments": {}}});
    let started = Instant::now();
    let (head, mut stream) = post(addr, Some(&session), call).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut answer = Vec::new();
    let mut chunk = [0; 1024];
    let rested = async {
        while !String::from_utf8_lossy(&answer).contains("rested") {
            let read = stream.read(&mut chunk).await.unwrap();
            assert!(
                read > 0,
                "closed before the answer, after {:?}",
                started.elapsed()
            );
            answer.extend_from_slice(&chunk[..read]);
        }
    };
    tokio::time::timeout(PATIENCE + NAP, rested)
        .await
        .expect("no answer");
    assert!(started.elapsed() >= NAP);
}

#[tokio::test]
async fn a_connection_over_the_cap_is_answered_503_and_closed() {
    let options = HttpOptions::default().max_connections(3).idle_timeout(LONG);
    let addr = serve(options).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    let mut extra = TcpStream::connect(addr).await.unwrap();
    let request = b"GET /nowhere HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n";
    extra.write_all(request).await.unwrap();
    // One more that sends nothing is answered all the same.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    for stream in [&mut extra, &mut silent] {
        let mut answer = String::new();
        tokio::time::timeout(PATIENCE, stream.read_to_string(&mut answer))
            .await
            .expect("the server kept the connection open")
            .unwrap();
        assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
        assert!(answer.contains("too many connections"), "{answer}");
    }
    // A client that sends its request at once reads the 503 too.
    assert_eq!(status_of(addr, "/nowhere").await, 503);
    // The connections within the cap are served.
    assert_eq!(
        get(&mut held[0], "/nowhere").await,
        "HTTP/1.1 404 Not Found"
    );
}

#[tokio::test]
async fn a_slot_frees_when_its_connection_closes() {
    let options = HttpOptions::default().max_connections(3).idle_timeout(LONG);
    let addr = serve(options).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(addr).await.unwrap());
    }
    assert_eq!(status_of(addr, "/nowhere").await, 503);
    held.pop();
    // Two slow connections remain: another client is served once the
    // server has seen the third close.
    let start = Instant::now();
    loop {
        match status_of(addr, "/nowhere").await {
            503 => assert!(
                start.elapsed() < PATIENCE,
                "the closed connection's slot stayed taken"
            ),
            status => break assert_eq!(status, 404),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn half_sent_admin_requests_over_the_cap_are_refused_and_leave_the_ports_answering() {
    let mcp = serve(HttpOptions::default()).await;
    let admin = serve_admin(|admin| {
        admin
            .max_connections(4)
            .header_timeout(Duration::from_millis(500))
    })
    .await;
    let mut flood = half_sent(admin, 24).await;
    // The MCP port answers while the admin's is full.
    assert_eq!(status_of(mcp, "/nowhere").await, 404);
    let mut endings = Vec::new();
    for stream in &mut flood {
        endings.push(ending(stream).await);
    }
    // Those within the cap are closed by the header timeout, the rest
    // refused: none is left open.
    assert!(endings.contains(&Ending::TooMany), "{endings:?}");
    drop(flood);

    // Once they are gone, a fresh admin request gets its answer.
    let start = Instant::now();
    loop {
        match status_of(admin, "/api/tools").await {
            503 => assert!(start.elapsed() < PATIENCE, "the slots stayed taken"),
            status => break assert_eq!(status, 401),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(status_of(mcp, "/nowhere").await, 404);
}

#[tokio::test]
async fn past_32_refusals_at_once_a_full_port_closes_connections_unanswered() {
    let admin = serve_admin(|admin| admin.max_connections(1).header_timeout(LONG)).await;
    // Each 503 waits a moment for its client to finish: many of them are
    // in progress at once.
    let mut flood = half_sent(admin, 101).await;
    let mut endings = Vec::new();
    for stream in &mut flood[1..] {
        endings.push(ending(stream).await);
    }
    let refused = endings.iter().filter(|e| **e == Ending::TooMany).count();
    assert!(refused > 0, "none answered 503");
    assert!(refused < endings.len(), "all {refused} answered 503");
    // The one within the cap is still served.
    assert!(still_open_after(&mut flood[0], Duration::from_millis(100)).await);
}

#[tokio::test]
async fn a_half_sent_admin_request_is_cut_after_the_header_timeout() {
    let admin = serve_admin(|admin| {
        admin
            .header_timeout(Duration::from_millis(300))
            .idle_timeout(LONG)
    })
    .await;
    let mut stream = half_sent(admin, 1).await.remove(0);
    let waited = closed(&mut stream).await;
    assert!(
        waited >= Duration::from_millis(200),
        "closed after {waited:?}"
    );
}

#[tokio::test]
async fn an_admin_connection_idle_past_the_idle_timeout_is_closed() {
    let admin = serve_admin(|admin| {
        admin
            .header_timeout(LONG)
            .idle_timeout(Duration::from_millis(500))
    })
    .await;
    let mut stream = TcpStream::connect(admin).await.unwrap();
    // The page's files are served and the connection kept alive, then
    // closed once idle too long.
    assert_eq!(get(&mut stream, "/app.css").await, "HTTP/1.1 200 OK");
    assert_eq!(get(&mut stream, "/app.css").await, "HTTP/1.1 200 OK");
    let waited = closed(&mut stream).await;
    assert!(
        waited >= Duration::from_millis(300),
        "closed after {waited:?}"
    );
}

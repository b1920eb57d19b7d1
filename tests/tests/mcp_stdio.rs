//! The stdio transport: lines the server cannot read are answered as
//! JSON-RPC says and the session goes on; a line over the limit is skipped
//! and answered with its id. Driven over an in-process stream with raw
//! lines and with rmcp's client, and once over a real process's stdio.

use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};
use tokio::io::{WriteHalf, split};
use tokio::task::JoinHandle;
use toolwright::mcp::{McpServer, ServeError, StdioOptions};
use toolwright::{Catalog, Container, Executor, tool};

/// Say `text` back.
#[tool(key = "text.echo", effect = read, authorize = public)]
async fn echo(text: String) -> String {
    text
}

/// How long a test waits for an answer before it fails.
const PATIENCE: Duration = Duration::from_secs(30);

fn server() -> McpServer<()> {
    let executor = Executor::new(Catalog::discover().unwrap(), Container::default()).unwrap();
    McpServer::new(executor, "stdio-test", "0.1.0")
}

/// A client that writes raw lines to a server on an in-process stream.
struct RawClient {
    replies: Lines<BufReader<ReadHalf<DuplexStream>>>,
    requests: WriteHalf<DuplexStream>,
    session: JoinHandle<Result<(), ServeError>>,
}

impl RawClient {
    /// Connected and initialized.
    async fn start(options: StdioOptions) -> Self {
        let (server_side, client_side) = tokio::io::duplex(64 * 1024);
        let (read, write) = split(server_side);
        let session = tokio::spawn(server().serve_stream((), read, write, options));
        let (replies, requests) = split(client_side);
        let mut client = RawClient {
            replies: BufReader::new(replies).lines(),
            requests,
            session,
        };
        let initialize = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "0"}}
        });
        client.send(initialize.to_string().as_bytes()).await;
        assert_eq!(client.reply().await["id"], 0);
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        client.send(initialized.to_string().as_bytes()).await;
        client
    }

    /// Writes `line` and its newline.
    async fn send(&mut self, line: &[u8]) {
        self.requests.write_all(line).await.unwrap();
        self.requests.write_all(b"\n").await.unwrap();
    }

    /// The next line the server writes, as JSON.
    async fn reply(&mut self) -> Value {
        let line = tokio::time::timeout(PATIENCE, self.replies.next_line())
            .await
            .expect("an answer in time")
            .unwrap()
            .expect("an answer before the stream ends");
        serde_json::from_str(&line).unwrap()
    }

    /// The error a line is answered with.
    async fn error_for(&mut self, line: &[u8]) -> Value {
        self.send(line).await;
        let reply = self.reply().await;
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        assert!(reply.get("result").is_none(), "{reply}");
        reply
    }

    /// The names `tools/list` gives: proof that the session still serves.
    async fn tool_names(&mut self, id: i64) -> Vec<String> {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
        self.send(request.to_string().as_bytes()).await;
        let reply = self.reply().await;
        assert_eq!(reply["id"], id, "{reply}");
        reply["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("a tool list: {reply}"))
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

/// A `tools/call` of `echo` exactly `bytes` long, with its id first or last.
fn echo_call(id: i64, bytes: usize, id_first: bool) -> Vec<u8> {
    let with = |text: &str| {
        let params = json!({"name": "echo", "arguments": {"text": text}});
        if id_first {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{params}}}"#)
        } else {
            // As the official TypeScript SDK writes a request.
            format!(r#"{{"method":"tools/call","params":{params},"jsonrpc":"2.0","id":{id}}}"#)
        }
    };
    let bare = with("").len();
    let line = with(&"x".repeat(bytes - bare));
    assert_eq!(line.len(), bytes);
    line.into_bytes()
}

#[tokio::test]
async fn a_line_that_is_not_json_gets_a_parse_error_and_the_session_goes_on() {
    let mut client = RawClient::start(StdioOptions::default()).await;
    for line in [
        &b"garbage"[..],
        b"{\"jsonrpc\": \"2.0\", \"id\": 3,",
        b"\"\xff\xfe\"",
    ] {
        let reply = client.error_for(line).await;
        assert_eq!(reply["id"], Value::Null, "{reply}");
        assert_eq!(reply["error"]["code"], -32700, "{reply}");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("Parse error"),
            "{reply}"
        );
    }
    assert_eq!(client.tool_names(4).await, ["echo"]);
}

#[tokio::test]
async fn json_that_is_not_a_message_gets_invalid_request_with_its_id() {
    let mut client = RawClient::start(StdioOptions::default()).await;
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]);
    let reply = client.error_for(batch.to_string().as_bytes()).await;
    assert_eq!(reply["id"], Value::Null, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batch"),
        "{reply}"
    );

    let reply = client.error_for(b"42").await;
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );

    // No `jsonrpc` member: the id is still read.
    let reply = client
        .error_for(br#"{"id": "seven", "method": "tools/list"}"#)
        .await;
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (json!("seven"), json!(-32600))
    );

    // A notification is never answered, readable or not: the next answer is
    // to the next request.
    client.send(br#"{"jsonrpc": "2.0", "method": 5}"#).await;
    assert_eq!(client.tool_names(8).await, ["echo"]);
}

#[tokio::test]
async fn a_line_over_the_default_limit_is_skipped_and_answered_with_its_id() {
    let mut client = RawClient::start(StdioOptions::default()).await;
    // A 2 MiB call, its id at the start, then at the end.
    for (id, id_first) in [(5, true), (6, false)] {
        let reply = client.error_for(&echo_call(id, 2 << 20, id_first)).await;
        assert_eq!(reply["id"], id, "{reply}");
        assert_eq!(reply["error"]["code"], -32600, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("1048576 bytes"), "{reply}");
        // The answer does not echo the request.
        assert!(message.len() < 100, "{reply}");
    }
    // No object, so no id: answered all the same.
    let reply = client.error_for(&vec![b'x'; 3 << 20]).await;
    assert_eq!(
        (reply["id"].clone(), reply["error"]["code"].clone()),
        (Value::Null, json!(-32600))
    );
    assert_eq!(client.tool_names(7).await, ["echo"]);
}

#[tokio::test]
async fn a_configured_limit_applies_to_the_byte() {
    let mut client = RawClient::start(StdioOptions::default().max_message_bytes(1024)).await;
    client.send(&echo_call(1, 1024, true)).await;
    let reply = client.reply().await;
    assert_eq!(reply["id"], 1, "{reply}");
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        !text.is_empty() && text.bytes().all(|b| b == b'x'),
        "{reply}"
    );

    let reply = client.error_for(&echo_call(2, 1025, true)).await;
    assert_eq!(reply["id"], 2, "{reply}");
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1024 bytes"),
        "{reply}"
    );
    assert_eq!(client.tool_names(3).await, ["echo"]);
}

#[tokio::test]
async fn the_session_ends_when_the_client_closes_its_side() {
    let mut client = RawClient::start(StdioOptions::default()).await;
    // Half a request, then the end of the stream: not a message.
    client.requests.write_all(b"{\"jsonrpc\":").await.unwrap();
    client.requests.shutdown().await.unwrap();
    let ended = tokio::time::timeout(PATIENCE, client.session).await;
    ended.expect("the session ends").unwrap().unwrap();
}

#[tokio::test]
async fn rmcp_client_lists_and_calls_tools_over_the_transport() {
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let (read, write) = split(server_side);
    tokio::spawn(server().serve_stream((), read, write, StdioOptions::default()));
    let client = ().serve(client_side).await.unwrap();
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "stdio-test");

    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "echo");

    let mut arguments = serde_json::Map::new();
    arguments.insert("text".into(), json!("hello"));
    let result = client
        .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments))
        .await
        .unwrap();
    let content = serde_json::to_value(&result.content).unwrap();
    assert_eq!(content[0]["text"], "hello");
    assert_eq!(result.is_error, Some(false));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn many_calls_at_once_each_get_their_own_answer() {
    let (server_side, client_side) = tokio::io::duplex(4 * 1024);
    let (read, write) = split(server_side);
    tokio::spawn(server().serve_stream((), read, write, StdioOptions::default()));
    let client = ().serve(client_side).await.unwrap();
    // Answers are written while requests are read: neither side's lines
    // may be cut or interleaved.
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..200 {
        let peer = client.peer().clone();
        calls.spawn(async move {
            let text = format!("{i}:{}", "y".repeat(i * 37));
            let mut arguments = serde_json::Map::new();
            arguments.insert("text".into(), json!(text));
            let call = CallToolRequestParams::new("echo").with_arguments(arguments);
            let result = peer.call_tool(call).await.unwrap();
            let content = serde_json::to_value(&result.content).unwrap();
            assert_eq!(content[0]["text"], text);
        });
    }
    let all = async {
        while let Some(call) = calls.join_next().await {
            call.unwrap();
        }
    };
    tokio::time::timeout(PATIENCE, all)
        .await
        .expect("every answer in time");
    client.cancel().await.unwrap();
}

/// A child process, killed when the test ends however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_quickstart_on_real_stdio_answers_what_it_cannot_read() {
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_quickstart-server"))
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let (lines, replies) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { return };
            if lines.send(line).is_err() {
                return;
            }
        }
    });
    let mut stdin = child.0.stdin.take().unwrap();
    let mut send = |line: &[u8]| {
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    };
    let reply = || -> Value {
        let line = replies.recv_timeout(PATIENCE).expect("an answer in time");
        serde_json::from_str(&line).unwrap()
    };

    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw", "version": "0"}}
    });
    send(initialize.to_string().as_bytes());
    assert_eq!(reply()["id"], 1);
    send(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            .to_string()
            .as_bytes(),
    );

    send(b"garbage");
    let answer = reply();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );

    send(&echo_call(2, 2 << 20, true));
    let answer = reply();
    assert_eq!(
        (answer["id"].clone(), answer["error"]["code"].clone()),
        (json!(2), json!(-32600))
    );

    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
            .to_string()
            .as_bytes(),
    );
    let answer = reply();
    assert_eq!(answer["id"], 3, "{answer}");
    assert!(
        answer["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{answer}"
    );
}

//! `notifications/tools/list_changed`: the MCP server tells each session
//! once per burst of registry changes, only when the tools that session sees
//! changed, forgets closed sessions, and leaves no task behind.
//! (The official Python SDK hears it over Streamable HTTP in `official_sdks.rs`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::task::JoinHandle;
use toolwright::mcp::McpServer;
use toolwright::{
    Catalog, Container, Effect, Executor, Invocation,
    registry::{Override, Policy, Rule, Selector, View},
    tool,
};

/// Read a note.
#[tool(key = "notes.read", effect = read, authorize = public)]
async fn read_note(id: u64) -> String {
    format!("note {id}")
}

/// Delete a note.
#[tool(key = "notes.delete", effect = destructive, authorize = public, approve = approved)]
async fn delete_note(id: u64) -> bool {
    id > 0
}

async fn approved(_: &(), _: &Invocation<'_, DeleteNoteArgs>) -> bool {
    true
}

/// Look up the weather.
#[tool(key = "weather.get", effect = read, authorize = public)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

fn executor() -> Executor {
    let catalog = Catalog::builder()
        .register::<ReadNoteArgs>()
        .register::<DeleteNoteArgs>()
        .register::<WeatherArgs>()
        .build()
        .unwrap();
    Executor::new(catalog, Container::default()).unwrap()
}

#[derive(Clone, Copy)]
enum Caller {
    Guest,
    Staff,
}

/// Guests see the read tools, staff every tool.
fn server_with_views(executor: Executor) -> McpServer<Caller> {
    let reads = View::new(Selector::effect(Effect::Read));
    let all = View::new(Selector::All);
    McpServer::builder(executor, "list-changed-test", "0.1.0")
        .views(move |caller| match caller {
            Caller::Guest => reads.clone(),
            Caller::Staff => all.clone(),
        })
        .build()
}

/// A client that counts the `list_changed` notifications it hears.
#[derive(Clone, Default)]
struct Listener {
    heard: Arc<AtomicUsize>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.heard.fetch_add(1, Ordering::SeqCst);
    }
}

struct Client {
    service: RunningService<RoleClient, Listener>,
    heard: Arc<AtomicUsize>,
    /// The server's side of the session; it ends when the client closes.
    session: JoinHandle<()>,
}

impl Client {
    fn heard(&self) -> usize {
        self.heard.load(Ordering::SeqCst)
    }

    async fn names(&self) -> Vec<String> {
        let tools = self.service.list_all_tools().await.unwrap();
        tools.iter().map(|t| t.name.to_string()).collect()
    }

    /// Closes the client, and waits until the server's side has ended.
    async fn close(self) {
        self.service.cancel().await.unwrap();
        self.session.await.unwrap();
    }
}

async fn connect<C: Send + Sync + 'static>(server: &McpServer<C>, caller: C) -> Client {
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(caller);
    let session = tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let listener = Listener::default();
    let heard = listener.heard.clone();
    let service = listener.serve(client_io).await.unwrap();
    Client {
        service,
        heard,
        session,
    }
}

/// Waits until `done`; panics after about ten seconds (a hang, not a slow run).
async fn until(what: &str, done: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if done() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("still waiting for {what}");
}

#[tokio::test]
async fn a_burst_of_changes_is_announced_once_and_the_client_relists() {
    let executor = executor();
    let registry = executor.registry().clone();
    let server = McpServer::new(executor, "list-changed-test", "0.1.0");
    let client = connect(&server, ()).await;
    let capabilities = &client.service.peer_info().unwrap().capabilities;
    assert_eq!(
        capabilities.tools.as_ref().unwrap().list_changed,
        Some(true)
    );
    until("the session to be tracked", || server.sessions() == 1).await;

    // Three changes in a row: one notification.
    registry
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    registry
        .disable(&Selector::name("weather"), "still down")
        .unwrap();
    registry
        .disable(&Selector::name("delete_note"), "audit")
        .unwrap();
    until("the notification", || client.heard() >= 1).await;
    assert_eq!(client.names().await, ["read_note"]);
    assert_eq!(client.heard(), 1);

    registry.enable(&Selector::All).unwrap();
    until("the second notification", || client.heard() >= 2).await;
    assert_eq!(
        client.names().await,
        ["delete_note", "read_note", "weather"]
    );
    assert_eq!(client.heard(), 2);
    client.close().await;
}

#[tokio::test]
async fn an_override_is_announced_and_the_client_relists_the_new_description() {
    let executor = executor();
    let registry = executor.registry().clone();
    let server = McpServer::new(executor, "list-changed-test", "0.1.0");
    let client = connect(&server, ()).await;
    until("the session to be tracked", || server.sessions() == 1).await;

    let clearer = "Look up today's weather; `city` is a city's English name.";
    registry
        .set_override(
            &Selector::name("weather"),
            Override::new().description(clearer),
        )
        .unwrap();
    until("the notification", || client.heard() >= 1).await;
    let tools = client.service.list_all_tools().await.unwrap();
    let weather = tools.iter().find(|tool| tool.name == "weather").unwrap();
    assert_eq!(weather.description.as_deref(), Some(clearer));
    assert_eq!(client.heard(), 1);
    client.close().await;
}

#[tokio::test]
async fn only_sessions_whose_tools_changed_hear_of_it() {
    let executor = executor();
    let registry = executor.registry().clone();
    let server = server_with_views(executor);
    let guest = connect(&server, Caller::Guest).await;
    let staff = connect(&server, Caller::Staff).await;
    until("both sessions to be tracked", || server.sessions() == 2).await;

    // Nobody's list changes.
    registry.set_policy(Policy::new().rule(Rule::allow_read_only()));
    // Only staff see the destructive tool.
    registry
        .disable(&Selector::name("delete_note"), "audit")
        .unwrap();
    until("staff to hear of it", || staff.heard() >= 1).await;
    // Both see the weather.
    registry
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    until("staff to hear of it again", || staff.heard() >= 2).await;
    until("the guest to hear of it", || guest.heard() >= 1).await;

    // A session's messages arrive in order: a notification sent before
    // the lists are answered has been counted by then.
    assert_eq!(guest.names().await, ["read_note"]);
    assert_eq!(staff.names().await, ["read_note"]);
    assert_eq!((guest.heard(), staff.heard()), (1, 2));
    guest.close().await;
    staff.close().await;
}

#[tokio::test]
async fn closed_sessions_are_forgotten() {
    let executor = executor();
    let registry = executor.registry().clone();
    let server = McpServer::new(executor, "list-changed-test", "0.1.0");
    let staying = connect(&server, ()).await;
    for _ in 0..40 {
        let leaving = connect(&server, ()).await;
        until("the session to be tracked", || server.sessions() == 2).await;
        leaving.close().await;
        assert_eq!(server.sessions(), 1);
    }

    // Closed after it was tracked, not yet swept when the change comes.
    let leaving = connect(&server, ()).await;
    until("the session to be tracked", || server.sessions() == 2).await;
    leaving.close().await;
    registry
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    until("the notification", || staying.heard() >= 1).await;
    assert_eq!(staying.names().await, ["delete_note", "read_note"]);
    assert_eq!(server.sessions(), 1);
    staying.close().await;
    assert_eq!(server.sessions(), 0);
}

#[tokio::test]
async fn the_servers_task_ends_with_the_server() {
    let executor = executor();
    let registry = executor.registry().clone();
    let alive = || {
        tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks()
    };
    let before = alive();

    let server = McpServer::new(executor, "list-changed-test", "0.1.0");
    let client = connect(&server, ()).await;
    until("the session to be tracked", || server.sessions() == 1).await;
    registry
        .disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    until("the notification", || client.heard() >= 1).await;
    client.close().await;
    drop(server);

    // The registry lives on (the application keeps it); the task does not.
    until("every task to end", || alive() == before).await;
    registry.enable(&Selector::All).unwrap();
}

/// A client of the 2026-07-28 protocol, which has no initialization,
/// speaking raw JSON-RPC lines: each request carries its protocol version.
struct ModernClient {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::Lines<tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
}

impl ModernClient {
    fn connect<C: Send + Sync + 'static>(server: &McpServer<C>, caller: C) -> ModernClient {
        use tokio::io::AsyncBufReadExt as _;
        let (server_io, client_io) = tokio::io::duplex(64 * 1024);
        let handler = server.handler(caller);
        tokio::spawn(async move {
            if let Ok(running) = handler.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let (read, write) = tokio::io::split(client_io);
        ModernClient {
            write,
            read: tokio::io::BufReader::new(read).lines(),
        }
    }

    async fn request(&mut self, id: u64, method: &str, mut params: serde_json::Value) {
        use tokio::io::AsyncWriteExt as _;
        params["_meta"] = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        let line =
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The next message, within a few seconds.
    async fn next(&mut self) -> serde_json::Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.read.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .expect("the stream is open");
        serde_json::from_str(&line).unwrap()
    }
}

/// #39: a 2026-07-28 client was told `tools.listChanged` by
/// `server/discover`, but `subscriptions/listen` answered -32601, so it
/// never heard a change. Now the listen request is acknowledged, and a
/// change to the tools its caller sees is announced on it.
#[tokio::test]
async fn a_2026_07_28_client_hears_list_changed_on_its_listen_request() {
    let executor = executor();
    let server = server_with_views(executor.clone());
    let mut client = ModernClient::connect(&server, Caller::Guest);
    client
        .request(
            7,
            "subscriptions/listen",
            serde_json::json!({"notifications": {"toolsListChanged": true}}),
        )
        .await;
    let acknowledged = client.next().await;
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["toolsListChanged"],
        true
    );

    // Staff-only changes are not the guest's.
    executor
        .registry()
        .disable(&Selector::name("delete_note"), "audit")
        .unwrap();
    executor
        .registry()
        .disable(&Selector::name("weather"), "maintenance")
        .unwrap();
    let changed = client.next().await;
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    let subscription = &changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"];
    assert_eq!(*subscription, 7, "{changed}");
    assert_eq!(server.sessions(), 1);
}

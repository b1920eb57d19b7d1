//! `registry::PostgresSync`: replicas of one registry, each with its own
//! pool, share each tool's state through PostgreSQL. A change on one
//! reaches the others, changes to different tools at once both survive,
//! and a replica that starts, restarts or reconnects catches up.
//!
//! PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL`, or
//! `postgres://postgres@127.0.0.1:5432/test`; each test works in a schema
//! and under a registry name of its own. Unreachable, a test says it is
//! skipped, and with `CI=true` it fails.

mod databases;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use databases::postgres_pool;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use sqlx::PgPool;
use sqlx::postgres::PgPoolOptions;
use toolwright::mcp::McpServer;
use toolwright::registry::{
    ChangeKind, Override, PostgresSync, Reason, Registry, Selector, ToolState,
};
use toolwright::{Catalog, Container, Executor, tool};

/// Look up the weather.
#[tool(key = "weather.get", effect = read, authorize = public)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

/// Read a note.
#[tool(key = "notes.read", effect = read, authorize = public)]
async fn read_note(id: u64) -> String {
    format!("note {id}")
}

/// Search the notes.
#[tool(key = "notes.search", effect = read, authorize = public)]
async fn search_notes(text: String) -> Vec<String> {
    vec![text]
}

fn catalog() -> Catalog {
    Catalog::builder()
        .register::<WeatherArgs>()
        .register::<ReadNoteArgs>()
        .register::<SearchNotesArgs>()
        .build()
        .unwrap()
}

/// The first replica's pool on a new schema of the test's own, or `None`
/// when PostgreSQL is not reachable (outside CI).
async fn first_pool(test: &str) -> Option<PgPool> {
    postgres_pool("tw_sync_", test).await
}

/// Another replica's pool on the same schema, named `name` in
/// `pg_stat_activity`.
async fn replica_pool(first: &PgPool, name: &str) -> PgPool {
    let options = (*first.connect_options()).clone().application_name(name);
    PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options)
        .await
        .unwrap()
}

/// A replica: a registry over the shared catalog, synced through its own pool.
async fn replica(first: &PgPool, registry_name: &str, name: &str) -> (Registry, PostgresSync) {
    let registry = Registry::new(catalog());
    let pool = replica_pool(first, name).await;
    let sync = PostgresSync::start(pool, registry_name, &registry)
        .await
        .unwrap();
    (registry, sync)
}

/// Waits until `done`, and says how long it took; panics after ten seconds.
async fn within_ten_seconds(what: &str, done: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if done() {
            let took = start.elapsed();
            println!("{what}: {took:?}");
            return took;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("still waiting for {what} after ten seconds");
}

/// The state the table holds for `key` of `registry`, once a write put one there.
async fn row(pool: &PgPool, registry: &str, key: &str) -> Option<ToolState> {
    let state: Option<String> = sqlx::query_scalar(
        "SELECT CAST(state AS TEXT) FROM toolwright_registry_state
         WHERE registry = $1 AND tool_key = $2",
    )
    .bind(registry)
    .bind(key)
    .fetch_optional(pool)
    .await
    .unwrap();
    state.map(|state| serde_json::from_str(&state).unwrap())
}

/// Waits until the table holds `key` disabled for `reason`.
async fn written_disabled(pool: &PgPool, registry: &str, key: &str, reason: &str) {
    let start = Instant::now();
    loop {
        let written = row(pool, registry, key).await;
        if written.and_then(|state| state.disabled).map(|d| d.reason) == Some(reason.to_owned()) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{key} never written disabled"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disable_on_one_replica_reaches_the_other_with_its_reason() {
    let Some(pool) = first_pool("disable_reaches").await else {
        return;
    };
    let name = "disable_reaches";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "b").await;
    let mut heard = b.subscribe();

    a.disable(
        &Selector::name("weather"),
        Reason::new("upstream 500s").by("ops"),
    )
    .unwrap();
    within_ten_seconds("a disable to reach the other replica", || {
        b.is_enabled("weather") == Some(false)
    })
    .await;
    let disabled = b.tools().disabled("weather").cloned().unwrap();
    assert_eq!(disabled.reason, "upstream 500s");
    assert_eq!(disabled.by.as_deref(), Some("ops"));
    let change = heard.next().await.unwrap().unwrap();
    assert_eq!(change.kind, ChangeKind::Synced);
    assert_eq!(change.keys, ["weather.get"]);
    assert_eq!(b.is_enabled("read_note"), Some(true));

    a.enable(&Selector::All).unwrap();
    within_ten_seconds("an enable to reach the other replica", || {
        b.is_enabled("weather") == Some(true)
    })
    .await;
    // Neither replica echoes what it applied back as a change of its own.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!((a.generation(), b.generation()), (2, 2));
    a_sync.stop().await;
    b_sync.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_override_on_one_replica_reaches_the_other() {
    let Some(pool) = first_pool("override_reaches").await else {
        return;
    };
    let name = "override_reaches";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "b").await;

    let clearer = "Look up today's weather; `city` is a city's English name.";
    b.set_override(
        &Selector::name("weather"),
        Override::new()
            .description(clearer)
            .timeout(Duration::from_secs(3)),
    )
    .unwrap();
    within_ten_seconds("an override to reach the other replica", || {
        a.tools().get("weather").unwrap().description() == clearer
    })
    .await;
    let weather = a.tools().get("weather").unwrap().overridden().cloned();
    assert_eq!(weather.unwrap().timeout, Some(Duration::from_secs(3)));
    a_sync.stop().await;
    b_sync.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_to_different_tools_both_survive() {
    let Some(pool) = first_pool("concurrent_changes").await else {
        return;
    };
    let name = "concurrent_changes";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "b").await;

    for round in 0..20 {
        let (on_a, on_b) = (a.clone(), b.clone());
        let reason_a = format!("a {round}");
        let reason_b = format!("b {round}");
        let one = tokio::spawn(async move {
            on_a.disable(&Selector::name("weather"), reason_a.as_str())
                .unwrap();
        });
        let two = tokio::spawn(async move {
            on_b.disable(&Selector::name("read_note"), reason_b.as_str())
                .unwrap();
        });
        one.await.unwrap();
        two.await.unwrap();
    }
    let reason =
        |registry: &Registry, name: &str| registry.tools().disabled(name).map(|d| d.reason.clone());
    within_ten_seconds("both replicas to hold both last changes", || {
        [&a, &b].iter().all(|replica| {
            reason(replica, "weather").as_deref() == Some("a 19")
                && reason(replica, "read_note").as_deref() == Some("b 19")
        })
    })
    .await;
    assert_eq!(a.is_enabled("search_notes"), Some(true));
    assert_eq!(b.is_enabled("search_notes"), Some(true));
    written_disabled(&pool, name, "weather.get", "a 19").await;
    written_disabled(&pool, name, "notes.read", "b 19").await;
    a_sync.stop().await;
    b_sync.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_changes_to_one_tool_end_the_same_on_every_replica_and_in_the_table() {
    let Some(pool) = first_pool("same_tool").await else {
        return;
    };
    let name = "same_tool";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "b").await;

    for round in 0..20 {
        let (on_a, on_b) = (a.clone(), b.clone());
        let one = tokio::spawn(async move {
            on_a.disable(&Selector::name("weather"), format!("a {round}"))
                .unwrap();
        });
        let two = tokio::spawn(async move {
            on_b.disable(&Selector::name("weather"), format!("b {round}"))
                .unwrap();
        });
        one.await.unwrap();
        two.await.unwrap();
    }
    // The last write wins, whichever it was: both replicas and the table agree.
    let reason = |registry: &Registry| {
        registry
            .tools()
            .disabled("weather")
            .map(|d| d.reason.clone())
    };
    let start = Instant::now();
    loop {
        let written = row(&pool, name, "weather.get").await;
        let written = written.and_then(|state| state.disabled).map(|d| d.reason);
        if written.is_some() && reason(&a) == written && reason(&b) == written {
            println!(
                "replicas and table agree on {written:?}: {:?}",
                start.elapsed()
            );
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no agreement: a {:?}, b {:?}, table {written:?}",
            reason(&a),
            reason(&b)
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    a_sync.stop().await;
    b_sync.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_started_later_takes_the_shared_state_at_start() {
    let Some(pool) = first_pool("started_later").await else {
        return;
    };
    let name = "started_later";
    let (a, a_sync) = replica(&pool, name, "a").await;
    a.disable(&Selector::name("weather"), Reason::new("audit").by("alice"))
        .unwrap();
    written_disabled(&pool, name, "weather.get", "audit").await;

    // The later replica disabled a tool at start for a reason of its own,
    // which no row contradicts, and has the weather tool on: the table
    // wins for the weather tool, and its own state is shared.
    let late = Registry::new(catalog());
    late.disable(&Selector::name("search_notes"), "not indexed yet")
        .unwrap();
    let late_pool = replica_pool(&pool, "late").await;
    let late_sync = PostgresSync::start(late_pool, name, &late).await.unwrap();
    let disabled = late.tools().disabled("weather").cloned().unwrap();
    assert_eq!(disabled.reason, "audit");
    assert_eq!(disabled.by.as_deref(), Some("alice"));
    assert_eq!(late.is_enabled("search_notes"), Some(false));
    within_ten_seconds("the later replica's own state to reach the first", || {
        a.is_enabled("search_notes") == Some(false)
    })
    .await;
    a_sync.stop().await;
    late_sync.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_made_while_a_replica_is_stopped_is_caught_up_when_it_starts() {
    let Some(pool) = first_pool("stopped_replica").await else {
        return;
    };
    let name = "stopped_replica";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "b").await;
    b_sync.stop().await;

    a.disable(&Selector::name("read_note"), "migrating notes")
        .unwrap();
    written_disabled(&pool, name, "notes.read", "migrating notes").await;
    assert_eq!(b.is_enabled("read_note"), Some(true));

    let b_pool = replica_pool(&pool, "b again").await;
    let b_sync = PostgresSync::start(b_pool, name, &b).await.unwrap();
    assert_eq!(b.is_enabled("read_note"), Some(false));
    // And it follows again.
    a.enable(&Selector::All).unwrap();
    within_ten_seconds("a change after the restart", || {
        b.is_enabled("read_note") == Some(true)
    })
    .await;
    a_sync.stop().await;
    b_sync.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_whose_listener_was_cut_off_catches_up() {
    let Some(pool) = first_pool("listener_cut").await else {
        return;
    };
    let name = "listener_cut";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "listener-cut-b").await;

    // B's listening connection is killed; what A writes meanwhile is
    // announced to nobody on B's side.
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'listener-cut-b' AND query LIKE 'LISTEN%'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(killed, [true]);
    a.disable(&Selector::name("search_notes"), "reindexing")
        .unwrap();
    within_ten_seconds("the change to reach the reconnected replica", || {
        b.is_enabled("search_notes") == Some(false)
    })
    .await;
    a_sync.stop().await;
    b_sync.stop().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_on_one_replica_hears_list_changed_when_another_disables_a_tool() {
    let Some(pool) = first_pool("list_changed").await else {
        return;
    };
    let name = "list_changed";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let (b, b_sync) = replica(&pool, name, "b").await;
    let executor = Executor::new(b.clone(), Container::default()).unwrap();
    let server = McpServer::new(executor, "registry-sync-test", "0.1.0");
    let (server_io, client_io) = tokio::io::duplex(64 * 1024);
    let handler = server.handler(());
    let session = tokio::spawn(async move {
        if let Ok(running) = handler.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let listener = Listener::default();
    let heard = listener.heard.clone();
    let client = listener.serve(client_io).await.unwrap();
    within_ten_seconds("the session to be tracked", || server.sessions() == 1).await;

    a.disable(&Selector::name("weather"), "upstream down")
        .unwrap();
    within_ten_seconds("list_changed on the other replica's session", || {
        heard.load(Ordering::SeqCst) >= 1
    })
    .await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["read_note", "search_notes"]);
    client.cancel().await.unwrap();
    session.await.unwrap();
    a_sync.stop().await;
    b_sync.stop().await;
}

/// A TCP proxy to PostgreSQL that can be cut: while down it drops every
/// connection it carries and refuses new ones, as a network outage would.
struct Outage {
    port: u16,
    up: tokio::sync::watch::Sender<bool>,
}

impl Outage {
    async fn start(to: (String, u16)) -> Outage {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (up, _) = tokio::sync::watch::channel(true);
        let watch = up.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut client, _)) = listener.accept().await else {
                    return;
                };
                let mut state = watch.subscribe();
                if !*state.borrow() {
                    continue;
                }
                let to = to.clone();
                tokio::spawn(async move {
                    let Ok(mut server) = tokio::net::TcpStream::connect(to).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
                        _ = state.wait_for(|up| !*up) => {}
                    }
                });
            }
        });
        Outage { port, up }
    }

    fn set(&self, up: bool) {
        self.up.send_replace(up);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_on_both_sides_of_an_outage_are_shared_when_it_ends() {
    let Some(pool) = first_pool("outage").await else {
        return;
    };
    let name = "outage";
    let (a, a_sync) = replica(&pool, name, "a").await;
    let options = databases::postgres_options();
    let outage = Outage::start((options.get_host().to_owned(), options.get_port())).await;
    let b = Registry::new(catalog());
    let b_pool = PgPoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_millis(500))
        .connect_with(
            (*pool.connect_options())
                .clone()
                .host("127.0.0.1")
                .port(outage.port),
        )
        .await
        .unwrap();
    let b_sync = PostgresSync::start(b_pool, name, &b).await.unwrap();

    outage.set(false);
    b.disable(&Selector::name("weather"), "disabled during the outage")
        .unwrap();
    a.disable(&Selector::name("read_note"), "also during the outage")
        .unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(a.is_enabled("weather"), Some(true));
    assert_eq!(b.is_enabled("read_note"), Some(true));

    outage.set(true);
    within_ten_seconds("both sides' changes to be shared after the outage", || {
        a.is_enabled("weather") == Some(false) && b.is_enabled("read_note") == Some(false)
    })
    .await;
    a_sync.stop().await;
    b_sync.stop().await;
}

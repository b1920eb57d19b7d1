//! #39's finding 5: rmcp logs every message at DEBUG, a `tools/call`'s
//! `#[secret]` argument in clear. Under `mcp::log_filter`, at TRACE, no
//! log holds it, over the in-memory (stdio's) transport and Streamable
//! HTTP; a layer without the filter, in the same process, shows what it
//! keeps out. Alone in its test binary: the subscriber is the process's.

mod mcp_client;

use std::fmt::{self, Write as _};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde_json::json;
use toolwright::mcp::{HttpOptions, McpServer, log_filter};
use toolwright::{Catalog, Container, Executor, tool};
use tracing::field::{Field, Visit};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, SubscriberExt as _};

use mcp_client::{call, connect, text};

const SECRET: &str = "sk-LOGGED-77d0e2";

/// Sign in to the mail server.
#[tool(key = "mail.login", effect = read, authorize = public)]
async fn login(user: String, #[secret] token: String) -> String {
    format!("welcome, {user} ({} characters)", token.len())
}

/// What one layer was given: every event and span, with its fields.
struct Capture(&'static Mutex<String>);

struct Fields<'a>(&'a mut String);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl<S: tracing::Subscriber> Layer<S> for Capture {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut text = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let metadata = event.metadata();
        let _ = write!(text, "{} {}:", metadata.level(), metadata.target());
        event.record(&mut Fields(&mut text));
        text.push('\n');
    }

    fn on_new_span(
        &self,
        attributes: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: Context<'_, S>,
    ) {
        let mut text = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = write!(text, "span {}:", attributes.metadata().name());
        attributes.record(&mut Fields(&mut text));
        text.push('\n');
    }

    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: Context<'_, S>,
    ) {
        let mut text = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        values.record(&mut Fields(&mut text));
        text.push('\n');
    }
}

/// What the layer under `log_filter(TRACE)` and the layer without a
/// filter were given so far.
fn logs() -> (String, String) {
    static FILTERED: Mutex<String> = Mutex::new(String::new());
    static EVERYTHING: Mutex<String> = Mutex::new(String::new());
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let subscriber = tracing_subscriber::registry()
            .with(Capture(&FILTERED).with_filter(log_filter(LevelFilter::TRACE)))
            .with(Capture(&EVERYTHING));
        tracing::subscriber::set_global_default(subscriber).unwrap();
    });
    let read = |text: &Mutex<String>| text.lock().unwrap_or_else(PoisonError::into_inner).clone();
    (read(&FILTERED), read(&EVERYTHING))
}

fn server() -> McpServer<()> {
    let catalog = Catalog::builder().register::<LoginArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    McpServer::new(executor, "logs", "0")
}

#[track_caller]
fn assert_kept_out(filtered: &str, everything: &str) {
    assert!(
        everything.contains(SECRET),
        "without the filter, rmcp's DEBUG events hold the secret (the finding); \
         if they no longer do, this test no longer reproduces it"
    );
    assert!(
        !filtered.contains(SECRET),
        "the secret reached a filtered log"
    );
    // Not a muzzle: rmcp's notices and toolwright's call spans still pass.
    assert!(filtered.contains("INFO rmcp"), "{filtered}");
    assert!(filtered.contains("span toolwright.call"), "{filtered}");
}

#[tokio::test]
async fn no_secret_reaches_a_log_at_trace_over_the_in_memory_transport() {
    logs();
    let client = connect(&server(), ()).await;
    let result = call(&client, "login", json!({"user": "ann", "token": SECRET})).await;
    assert!(text(&result).starts_with("welcome, ann"));
    client.cancel().await.unwrap();
    let (filtered, everything) = logs();
    assert_kept_out(&filtered, &everything);
}

#[tokio::test]
async fn no_secret_reaches_a_log_at_trace_over_streamable_http() {
    logs();
    let router = server().http_router(|_: &http::request::Parts| Ok(()), HttpOptions::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let post = |session: Option<&str>, body: serde_json::Value| {
        let mut request = reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let opened = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}}}),
    )
    .await
    .unwrap();
    let session = opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    post(
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await
    .unwrap();
    let called = post(
        Some(&session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "login", "arguments": {"user": "ann", "token": SECRET}}}),
    )
    .await
    .unwrap()
    .text()
    .await
    .unwrap();
    assert!(called.contains("welcome, ann"), "{called}");
    let (filtered, everything) = logs();
    assert_kept_out(&filtered, &everything);
}

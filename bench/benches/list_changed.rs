//! `notifications/tools/list_changed` fan-out: the time from
//! `Registry::disable` (or `enable`) to every connected session's client
//! having received the notification.
//!
//! Each session is an rmcp client served in-process over a
//! `tokio::io::duplex`, on a two-worker runtime, counting the notifications
//! it hears. Every iteration switches one tool off or back on, so every
//! session's list changes, and waits until each client has counted one
//! more. The time includes the server's settle window (the wait for the
//! rest of a burst); the one-session case shows that fixed part.
//!
//! `cargo bench -p toolwright-bench --bench list_changed`

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::Notify;
use toolwright::mcp::McpServer;
use toolwright::{
    Catalog, Container, Executor,
    registry::{Registry, Selector},
};

/// Read a note.
#[toolwright::tool(key = "notes.read", effect = read, authorize = public)]
async fn read_note(id: u64) -> String {
    format!("note {id}")
}

/// Look up the weather.
#[toolwright::tool(key = "weather.get", effect = read, authorize = public)]
async fn weather(city: String) -> String {
    format!("sunny in {city}")
}

/// What every client of one run has heard, and a wake-up when the count
/// reaches `target`.
#[derive(Default)]
struct Heard {
    count: AtomicUsize,
    target: AtomicUsize,
    reached: Notify,
}

#[derive(Clone)]
struct Listener(Arc<Heard>);

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let heard = &self.0;
        if heard.count.fetch_add(1, Ordering::SeqCst) + 1 == heard.target.load(Ordering::SeqCst) {
            heard.reached.notify_one();
        }
    }
}

/// A server with `sessions` clients connected and tracked.
struct Fanout {
    registry: Registry,
    heard: Arc<Heard>,
    sessions: usize,
    disabled: bool,
    _server: McpServer<()>,
    _clients: Vec<RunningService<RoleClient, Listener>>,
}

impl Fanout {
    async fn connect(sessions: usize) -> Self {
        let catalog = Catalog::builder()
            .register::<ReadNoteArgs>()
            .register::<WeatherArgs>()
            .build()
            .unwrap();
        let executor = Executor::new(catalog, Container::default()).unwrap();
        let registry = executor.registry().clone();
        let server = McpServer::new(executor, "fan-out", "0.1.0");
        let heard = Arc::new(Heard::default());
        let mut clients = Vec::with_capacity(sessions);
        for _ in 0..sessions {
            let (server_io, client_io) = tokio::io::duplex(4096);
            let handler = server.handler(());
            tokio::spawn(async move {
                if let Ok(running) = handler.serve(server_io).await {
                    let _ = running.waiting().await;
                }
            });
            clients.push(Listener(heard.clone()).serve(client_io).await.unwrap());
        }
        while server.sessions() < sessions {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Fanout {
            registry,
            heard,
            sessions,
            disabled: false,
            _server: server,
            _clients: clients,
        }
    }

    /// One change, until every client has heard of it.
    async fn change(&mut self) -> Duration {
        let heard = &self.heard;
        let target = heard.count.load(Ordering::SeqCst) + self.sessions;
        heard.target.store(target, Ordering::SeqCst);
        let start = Instant::now();
        let weather = Selector::name("weather");
        if self.disabled {
            self.registry.enable(&weather).unwrap();
        } else {
            self.registry.disable(&weather, "bench").unwrap();
        }
        self.disabled = !self.disabled;
        while heard.count.load(Ordering::SeqCst) < target {
            heard.reached.notified().await;
        }
        start.elapsed()
    }
}

fn fan_out(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("list_changed");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(20)
        .measurement_time(Duration::from_secs(10));
    for sessions in [1, 1000] {
        let mut fanout = runtime.block_on(Fanout::connect(sessions));
        group.bench_function(BenchmarkId::new("fan_out", sessions), |b| {
            b.iter_custom(|iterations| {
                runtime.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iterations {
                        total += fanout.change().await;
                    }
                    total
                })
            });
        });
        runtime.block_on(async { drop(fanout) });
    }
    group.finish();
}

criterion_group!(benches, fan_out);
criterion_main!(benches);

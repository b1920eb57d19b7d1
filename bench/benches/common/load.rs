//! Load for the throughput benches (`mcp_http.rs`, `gateway.rs`):
//! `in_flight` workers calling one after another for a fixed time.
#![allow(dead_code)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Calls completed per second by `in_flight` workers in `duration`: each
/// worker is made by `worker` and called until the time is up; a call
/// that answers `false` fails the bench.
pub(crate) async fn throughput<W, C, F>(worker: W, in_flight: usize, duration: Duration) -> f64
where
    W: Fn() -> C,
    C: FnMut() -> F + Send + 'static,
    F: Future<Output = bool> + Send,
{
    let (done, stop) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let started = Instant::now();
    let workers: Vec<_> = (0..in_flight)
        .map(|_| {
            let (mut call, done, stop) = (worker(), done.clone(), stop.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    assert!(call().await, "a call failed");
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    for worker in workers {
        worker.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

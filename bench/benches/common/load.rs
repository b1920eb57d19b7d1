//! Load for the throughput benches (`mcp_http.rs`, `gateway.rs`,
//! `rest.rs`): `in_flight` workers calling one after another for a fixed
//! time, and rounds that measure two servers in turn.
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

/// `rounds` measurements of `a` and `b` (each a throughput), in turns
/// whose order alternates, so that neither always runs on a machine the
/// other warmed: each one's figures, and `a / b` per round.
pub(crate) async fn rounds<A, B, FA, FB>(
    rounds: usize,
    a: A,
    b: B,
) -> (Vec<f64>, Vec<f64>, Vec<f64>)
where
    A: Fn() -> FA,
    B: Fn() -> FB,
    FA: Future<Output = f64>,
    FB: Future<Output = f64>,
{
    let (mut of_a, mut of_b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (x, y) = if round % 2 == 0 {
            let x = a().await;
            (x, b().await)
        } else {
            let y = b().await;
            (a().await, y)
        };
        of_a.push(x);
        of_b.push(y);
        ratios.push(x / y);
    }
    (of_a, of_b, ratios)
}

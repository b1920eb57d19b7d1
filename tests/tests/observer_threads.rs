//! Observers keep no thread of their own: an executor with sixteen
//! observers starts one thread, its dispatcher, and each observer is still
//! told of every call. Its own test binary, so that no other test's
//! threads come and go while it counts.
#![cfg(target_os = "linux")]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use toolwright::observe::Event;
use toolwright::{Catalog, Container, Executor, tool};

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = public)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The threads of this process, as Linux lists them.
fn threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("Linux lists a process's threads")
        .count()
}

#[tokio::test]
async fn sixteen_observers_start_one_thread_and_each_is_told() {
    let told: Vec<Arc<AtomicU64>> = (0..16).map(|_| Arc::default()).collect();
    let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    let mut builder = Executor::builder(catalog, Container::default());
    for count in &told {
        let count = count.clone();
        builder = builder.observe(move |_: &Event| {
            count.fetch_add(1, Ordering::SeqCst);
        });
    }
    let before = threads();
    let executor = builder.build().unwrap();
    assert_eq!(threads(), before + 1, "only the dispatcher starts");
    for a in 0..5 {
        let sum = executor.invoke("add", json!({"a": a, "b": 1}), &()).await;
        assert_eq!(sum.unwrap(), json!(a + 1));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while told.iter().any(|count| count.load(Ordering::SeqCst) < 5) {
        assert!(Instant::now() < deadline, "{:?}", executor.observer_stats());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(executor.observer_stats().iter().all(|s| s.delivered == 5));
}

//! Throughput of the shop through nginx (`deploy/nginx.conf`) with one
//! replica against three, on one PostgreSQL database: 16 keep-alive REST
//! clients calling `list_products` (a read of the products table through
//! the tools' pipeline), in rounds that alternate the two balancers.
//!
//! `cargo bench -p shop --bench replicas` (PostgreSQL as for the tests;
//! nginx installed). Everything runs on this machine: the clients, nginx,
//! the replicas and PostgreSQL share its cores, which is what limits
//! scaling here (see BENCHMARKS.md).

use std::time::Duration;

use serde_json::json;

#[path = "../tests/cluster/mod.rs"]
mod cluster;
#[path = "../../../bench/benches/common/load.rs"]
mod load;

use cluster::{Replica, database_url, free_port, nginx, post, postgres_options, run, start_nginx};

const IN_FLIGHT: usize = 16;
const ROUNDS: usize = 7;
const ROUND: Duration = Duration::from_secs(3);

fn main() {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(bench());
}

async fn bench() {
    let Some(nginx) = nginx() else {
        return println!("skipped: nginx is not installed");
    };
    let schema = "shop_bench_replicas";
    let Some(db) = cluster::fresh_schema(schema).await else {
        return println!("skipped: PostgreSQL is not reachable");
    };
    db.close().await;
    let database = database_url(postgres_options().get_port(), schema);
    let (token, _) = run(&database, &["token", "issue", "--as", "alice"]);
    let token = token.trim().to_owned();
    let replicas = [
        Replica::start(&database, false),
        Replica::start(&database, false),
        Replica::start(&database, false),
    ];
    let dir = std::env::temp_dir().join(format!("shop-bench-replicas-{}", std::process::id()));
    let (one_port, three_port) = (free_port(), free_port());
    let one = &replicas[0];
    let _one = start_nginx(&nginx, one_port, &[one, one, one], &dir.join("one"));
    let _three = start_nginx(&nginx, three_port, &replicas.each_ref(), &dir.join("three"));

    let load = |port: u16| {
        let token = token.clone();
        async move {
            let base = format!("http://127.0.0.1:{port}");
            let worker = || {
                let (client, base, token) = (reqwest::Client::new(), base.clone(), token.clone());
                move || {
                    let (client, base, token) = (client.clone(), base.clone(), token.clone());
                    async move {
                        let (status, _) =
                            post(&client, &base, &token, "list_products", &json!({}), None).await;
                        status == 200
                    }
                }
            };
            load::throughput(worker, IN_FLIGHT, ROUND).await
        }
    };
    // Warm-up: connections, pools, caches.
    load(three_port).await;
    load(one_port).await;
    let (three, one, ratios) = load::rounds(ROUNDS, || load(three_port), || load(one_port)).await;
    let median = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    };
    let range = |values: &[f64]| {
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        let high = values.iter().copied().fold(0.0, f64::max);
        format!("{low:.2}-{high:.2}")
    };
    println!(
        "list_products over REST through nginx, {IN_FLIGHT} clients, {ROUNDS} rounds of {ROUND:?}:"
    );
    println!("  1 replica:  {:.0} req/s", median(one.clone()));
    println!("  3 replicas: {:.0} req/s", median(three.clone()));
    println!(
        "  3 / 1: {:.2} (per round {})",
        median(ratios.clone()),
        range(&ratios)
    );
    // Where the CPU goes, one more window each: what limits throughput
    // here, and what would on a machine with more cores.
    for (label, port, serving) in [
        ("1 replica", one_port, &replicas[..1]),
        ("3 replicas", three_port, &replicas[..]),
    ] {
        let nginx_pid = if port == one_port {
            _one.0.id()
        } else {
            _three.0.id()
        };
        let pids: Vec<u32> = serving
            .iter()
            .map(|replica| replica.process.0.id())
            .collect();
        let before = (
            cpu_of(std::process::id()),
            cpu_of(nginx_pid),
            pids.iter().map(|&pid| cpu_of(pid)).sum::<f64>(),
            machine_busy(),
        );
        let started = std::time::Instant::now();
        let rate = load(port).await;
        let requests = rate * started.elapsed().as_secs_f64();
        let after = (
            cpu_of(std::process::id()),
            cpu_of(nginx_pid),
            pids.iter().map(|&pid| cpu_of(pid)).sum::<f64>(),
            machine_busy(),
        );
        let per = |seconds: f64| seconds * 1e6 / requests;
        let (clients, balancer, served, busy) = (
            after.0 - before.0,
            after.1 - before.1,
            after.2 - before.2,
            after.3 - before.3,
        );
        println!(
            "  CPU per request, {label} (µs): clients {:.0}, nginx {:.0}, replicas {:.0}, the rest (PostgreSQL) {:.0}; {:.2} of 2 cores busy",
            per(clients),
            per(balancer),
            per(served),
            per(busy - clients - balancer - served),
            busy / started.elapsed().as_secs_f64(),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The CPU time (user and system) process `pid` has used, in seconds.
fn cpu_of(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command's `)`: utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|field| field.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / CLOCK_TICKS
}

/// The machine's busy CPU time, all cores, in seconds.
fn machine_busy() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let ticks: Vec<f64> = stat
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .filter_map(|field| field.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal: all but idle and iowait.
    let busy: f64 = ticks
        .iter()
        .take(8)
        .enumerate()
        .filter(|(i, _)| *i != 3 && *i != 4)
        .map(|(_, t)| t)
        .sum();
    busy / CLOCK_TICKS
}

/// `/proc`'s clock ticks per second (`getconf CLK_TCK`), 100 on Linux.
const CLOCK_TICKS: f64 = 100.0;

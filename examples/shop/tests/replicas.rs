//! Three shop replicas on one PostgreSQL database behind nginx, run with
//! `deploy/nginx.conf` as it ships (its ports replaced), as an operator
//! would run them: every guarantee holds across replicas.
//!
//! - **Approval race:** one approved write, then 50 identical calls at
//!   once over the replicas: exactly one runs.
//! - **Idempotency:** one key sent to two replicas runs one call.
//! - **Disable across replicas:** a tool switched off on replica 1's admin
//!   leaves replica 3's list, and the official Python SDK listening on
//!   replica 3 (MCP 2026-07-28, no session) is told.
//! - **A replica killed mid-write:** its consumed approval stays
//!   unsettled ("outcome unknown"), is not run again, and the balancer
//!   routes around the dead replica.
//! - **The database cut off and back:** every replica reaches PostgreSQL
//!   through a TCP proxy the test cuts; calls fail closed while it is down
//!   (no write without its ledger) and succeed again once it is back,
//!   with no replica restarted.
//!
//! PostgreSQL: `TOOLWRIGHT_TEST_DATABASE_URL` or
//! `postgres://postgres@127.0.0.1:5432/test`, in a schema of this test's
//! own. nginx: Debian's (`.ci/run` installs it). Without either, the test
//! says in one line that it skipped; with `CI=true` it fails.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use cluster::{
    Proxy, Replica, count, database_url, free_port, fresh_schema, nginx, post, postgres_options,
    request_id, run, skip, start_nginx,
};

mod cluster;
#[path = "../../../tests/tests/installs/mod.rs"]
mod installs;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_replicas_behind_nginx_keep_every_guarantee() {
    let Some(nginx) = nginx() else {
        return skip("nginx is not installed (apt-get install nginx)");
    };
    let schema = "shop_replicas";
    let Some(db) = fresh_schema(schema).await else {
        return skip("PostgreSQL is not reachable (set TOOLWRIGHT_TEST_DATABASE_URL)");
    };
    let options = postgres_options();
    let to = format!("{}:{}", options.get_host(), options.get_port());
    let to: SocketAddr = tokio::net::lookup_host(&to).await.unwrap().next().unwrap();
    let proxy = Proxy::start(to);
    let database = database_url(proxy.port, schema);

    // The schema and the tokens, before any replica starts.
    let (alice, _) = run(&database, &["token", "issue", "--as", "alice"]);
    let alice = alice.trim().to_owned();
    let mut replicas = [
        Replica::start(&database, true),
        Replica::start(&database, false),
        Replica::start(&database, false),
    ];
    let dir = std::env::temp_dir().join(format!("shop-replicas-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let lb_port = free_port();
    let _nginx = start_nginx(&nginx, lb_port, &replicas.each_ref().map(|r| r), &dir);
    let lb = format!("http://127.0.0.1:{lb_port}");
    let client = reqwest::Client::new();

    // Reads reach every replica through the balancer.
    for _ in 0..6 {
        let (status, _) = post(&client, &lb, &alice, "list_products", &json!({}), None).await;
        assert_eq!(status, 200);
    }

    // Approval race: one approved write, 50 identical calls at once.
    let order = json!({"tenant_id": 1, "product_id": 1, "quantity": 1});
    let asked = post(&client, &lb, &alice, "place_order", &order, None).await;
    run(&database, &["approve", &request_id(&asked), "--as", "bob"]);
    let calls: Vec<_> = (0..50)
        .map(|_| {
            let (client, lb, alice, order) =
                (client.clone(), lb.clone(), alice.clone(), order.clone());
            tokio::spawn(
                async move { post(&client, &lb, &alice, "place_order", &order, None).await },
            )
        })
        .collect();
    let mut statuses = Vec::new();
    for call in calls {
        statuses.push(call.await.unwrap().0);
    }
    let ran = statuses.iter().filter(|&&status| status == 200).count();
    assert_eq!(ran, 1, "one call ran: {statuses:?}");
    assert!(
        statuses.iter().all(|&s| s == 200 || s == 202),
        "{statuses:?}"
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM orders WHERE product_id = 1").await,
        1
    );

    // Idempotency: one key, two replicas, one call.
    let order = json!({"tenant_id": 1, "product_id": 2, "quantity": 1});
    let asked = post(
        &client,
        &replicas[0].url(),
        &alice,
        "place_order",
        &order,
        Some("k-2"),
    )
    .await;
    run(&database, &["approve", &request_id(&asked), "--as", "bob"]);
    let first = post(
        &client,
        &replicas[0].url(),
        &alice,
        "place_order",
        &order,
        Some("k-2"),
    )
    .await;
    let second = post(
        &client,
        &replicas[1].url(),
        &alice,
        "place_order",
        &order,
        Some("k-2"),
    )
    .await;
    assert_eq!(first.0, 200, "{first:?}");
    assert_eq!(
        second, first,
        "the second replica answers with the first call's order"
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM orders WHERE product_id = 2").await,
        1
    );

    // Disable across replicas, heard by the Python SDK on replica 3.
    disable_across_replicas(&replicas, &alice).await;

    // A replica killed mid-write: the body waits on a row the test holds.
    let order = json!({"tenant_id": 1, "product_id": 3, "quantity": 1});
    let asked = post(&client, &lb, &alice, "place_order", &order, None).await;
    let id = request_id(&asked);
    run(&database, &["approve", &id, "--as", "bob"]);
    let mut lock = db.begin().await.unwrap();
    sqlx::query("SELECT stock FROM products WHERE id = 3 FOR UPDATE")
        .execute(&mut *lock)
        .await
        .unwrap();
    let victim = replicas[1].url();
    let write = {
        let (client, alice, order) = (client.clone(), alice.clone(), order.clone());
        tokio::spawn(
            async move { post(&client, &victim, &alice, "place_order", &order, None).await },
        )
    };
    let consumed = format!(
        "SELECT COUNT(*) FROM toolwright_approvals WHERE id = {id} AND status = 'consumed'"
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    while count(&db, &consumed).await == 0 {
        assert!(
            Instant::now() < deadline,
            "the call never consumed its approval"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let killed = &mut replicas[1].process.0;
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert_eq!(
        write.await.unwrap().0,
        0,
        "the killed replica never answered"
    );
    lock.rollback().await.unwrap();
    // Outcome unknown: consumed, never settled, and never run again.
    assert_eq!(
        count(&db, &consumed).await,
        1,
        "left unsettled for a person"
    );
    let retried = post(&client, &lb, &alice, "place_order", &order, None).await;
    assert_eq!(retried.0, 202, "a new approval is needed: {retried:?}");
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM orders WHERE product_id = 3").await,
        0
    );
    // The balancer routes around the dead replica.
    for _ in 0..6 {
        let (status, _) = post(&client, &lb, &alice, "list_products", &json!({}), None).await;
        assert_eq!(status, 200);
    }

    // The database cut off: calls fail closed; back: they succeed again.
    let order = json!({"tenant_id": 1, "product_id": 3, "quantity": 2});
    let asked = post(&client, &lb, &alice, "place_order", &order, None).await;
    run(&database, &["approve", &request_id(&asked), "--as", "bob"]);
    proxy.cut();
    let down = post(&client, &lb, &alice, "place_order", &order, None).await;
    assert!(down.0 >= 500, "no write without the database: {down:?}");
    let read = post(&client, &lb, &alice, "list_products", &json!({}), None).await;
    assert!(read.0 >= 500, "no read either: {read:?}");
    proxy.restore();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut answered = 0;
    while answered < 6 {
        let (status, _) = post(&client, &lb, &alice, "list_products", &json!({}), None).await;
        answered = if status == 200 { answered + 1 } else { 0 };
        assert!(
            Instant::now() < deadline,
            "the replicas did not recover: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM orders WHERE product_id = 3").await,
        0,
        "nothing was written while the database was away"
    );
    // A write asked, approved and run now, by the same replicas.
    let mut answer = post(&client, &lb, &alice, "place_order", &order, None).await;
    if answer.0 == 202 {
        run(&database, &["approve", &request_id(&answer), "--as", "bob"]);
        answer = post(&client, &lb, &alice, "place_order", &order, None).await;
    }
    assert_eq!(
        answer.0, 200,
        "the replicas recovered by themselves: {answer:?}"
    );
    assert_eq!(
        count(&db, "SELECT COUNT(*) FROM orders WHERE product_id = 3").await,
        1
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replica 1's admin switches `get_product` off; replica 3 stops listing
/// it, and a Python SDK client listening on replica 3 is told.
async fn disable_across_replicas(replicas: &[Replica; 3], token: &str) {
    let Some(python) = installs::python_or_skip("disable_across_replicas") else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/listen_client.py");
    let mut listener = Command::new(&python)
        .arg(&script)
        .arg(format!("{}/mcp", replicas[2].url()))
        .arg(token)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(listener.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push(line.clone());
        if line == "listening" {
            break;
        }
    }
    assert!(seen.iter().any(|l| l.contains("get_product")), "{seen:?}");
    let (admin_port, operator) = replicas[0].admin.as_ref().unwrap();
    let started = Instant::now();
    let disabled = reqwest::Client::new()
        .post(format!(
            "http://127.0.0.1:{admin_port}/api/tools/get_product/disable"
        ))
        .bearer_auth(operator)
        .header("content-type", "application/json")
        .header("if-match", "*")
        .body(json!({"reason": "maintenance"}).to_string())
        .send()
        .await
        .unwrap();
    assert!(
        disabled.status().is_success(),
        "{}",
        disabled.text().await.unwrap()
    );
    let rest: Vec<String> = lines.map(|line| line.unwrap()).collect();
    let heard = started.elapsed();
    assert!(listener.wait().unwrap().success(), "{seen:?} {rest:?}");
    assert!(rest.contains(&"notified".to_owned()), "{rest:?}");
    let relisted = rest.iter().find(|l| l.starts_with("relisted:")).unwrap();
    assert!(!relisted.contains("get_product"), "{relisted}");
    println!("replica 3's listener heard the disable on replica 1 after {heard:?}");
}

//! A cluster of shop replicas for the replica test and bench: PostgreSQL
//! in a schema of their own, reached through a TCP proxy that can be cut,
//! `shop serve --http` processes, and nginx with `deploy/nginx.conf`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

/// Skips (one line) or, under `CI=true`, fails.
pub(crate) fn skip(why: &str) {
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    println!("skipped: {why}");
}

/// Where the tests' PostgreSQL is.
pub(crate) fn postgres_options() -> PgConnectOptions {
    let url = std::env::var("TOOLWRIGHT_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    url.parse()
        .expect("TOOLWRIGHT_TEST_DATABASE_URL is a PostgreSQL URL")
}

/// A fresh schema `name`, and a pool on it; `None` when PostgreSQL cannot
/// be reached.
pub(crate) async fn fresh_schema(name: &str) -> Option<PgPool> {
    let options = postgres_options();
    let admin = PgPoolOptions::new()
        .max_connections(1)
        .acquire_timeout(Duration::from_secs(5))
        .connect_with(options.clone())
        .await
        .ok()?;
    for statement in [
        format!("DROP SCHEMA IF EXISTS {name} CASCADE"),
        format!("CREATE SCHEMA {name}"),
    ] {
        sqlx::raw_sql(&statement).execute(&admin).await.unwrap();
    }
    admin.close().await;
    let pool = PgPoolOptions::new()
        .max_connections(4)
        .connect_with(options.options([("search_path", name)]))
        .await
        .unwrap();
    Some(pool)
}

/// The replicas' `DATABASE_URL`: the tests' database through `port` (the
/// proxy), with `schema` as its search path.
pub(crate) fn database_url(port: u16, schema: &str) -> String {
    let options = postgres_options();
    let user = options.get_username();
    let database = options.get_database().unwrap_or("postgres");
    format!("postgres://{user}@127.0.0.1:{port}/{database}?options=-c%20search_path%3D{schema}")
}

/// A loopback port nothing listens on now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `port`.
pub(crate) fn wait_for_port(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A TCP proxy to PostgreSQL that the test can cut (every connection
/// closed, new ones refused at once) and restore: the database going away
/// and coming back, as a restart does, without touching the machine's
/// PostgreSQL, which other tests share.
pub(crate) struct Proxy {
    pub(crate) port: u16,
    cut: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    pub(crate) fn start(to: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let (cut_, open_) = (cut.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if cut_.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(to) else {
                    continue;
                };
                let mut open = open_.lock().unwrap();
                open.push(client.try_clone().unwrap());
                open.push(server.try_clone().unwrap());
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Proxy { port, cut, open }
    }

    pub(crate) fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    pub(crate) fn restore(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

/// A process the test stops when it ends.
pub(crate) struct Running(pub(crate) Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `shop <args>` on the database.
pub(crate) fn shop(database: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_shop"));
    command.args(args).env("DATABASE_URL", database);
    command
}

/// Runs `shop <args>`, expecting success; its stdout and stderr.
pub(crate) fn run(database: &str, args: &[&str]) -> (String, String) {
    let output = shop(database, args).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    );
    assert!(output.status.success(), "shop {args:?} failed: {stderr}");
    (stdout, stderr)
}

/// A replica: `shop serve --http` on `port`, stateless, and the admin on
/// `admin` with the operator token it printed.
pub(crate) struct Replica {
    pub(crate) port: u16,
    pub(crate) process: Running,
    /// The admin's port and operator token, when it serves one.
    pub(crate) admin: Option<(u16, String)>,
}

impl Replica {
    pub(crate) fn start(database: &str, admin: bool) -> Replica {
        let port = free_port();
        let http = format!("127.0.0.1:{port}");
        let admin_port = admin.then(free_port);
        let admin_addr = admin_port.map(|port| format!("127.0.0.1:{port}"));
        let mut args = vec!["serve", "--http", &http, "--stateless"];
        if let Some(addr) = &admin_addr {
            args.extend(["--admin", addr]);
        }
        let mut child = shop(database, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let (token_tx, token_rx) = std::sync::mpsc::channel();
        // Reads the operator token, and keeps the rest in a log beside the
        // test's files (a full pipe would stop the replica).
        let log = std::env::temp_dir().join(format!("shop-replica-{port}.log"));
        let mut log = std::fs::File::create(log).unwrap();
        std::thread::spawn(move || {
            use std::io::Write as _;
            let mut lines = stderr.lines().map_while(Result::ok);
            let mut next_is_token = false;
            for line in lines.by_ref() {
                let _ = writeln!(log, "{line}");
                if next_is_token {
                    let _ = token_tx.send(line.trim().to_owned());
                    next_is_token = false;
                    continue;
                }
                next_is_token = line.starts_with("serving the admin page at");
            }
        });
        let process = Running(child);
        wait_for_port(port, "a replica");
        let admin = admin_port.map(|admin_port| {
            let token = token_rx
                .recv_timeout(Duration::from_secs(60))
                .expect("the admin's operator token");
            wait_for_port(admin_port, "the admin");
            (admin_port, token)
        });
        Replica {
            port,
            process,
            admin,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

/// nginx on `port` with `deploy/nginx.conf`, its replicas' ports replaced.
pub(crate) fn start_nginx(nginx: &Path, port: u16, replicas: &[&Replica], dir: &Path) -> Running {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/nginx.conf");
    let mut config = std::fs::read_to_string(&shipped).unwrap();
    config = config.replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"));
    for (i, replica) in replicas.iter().enumerate() {
        let shipped_port = format!("127.0.0.1:{}", 8081 + i);
        assert!(
            config.contains(&shipped_port),
            "deploy/nginx.conf names {shipped_port}"
        );
        config = config.replace(&shipped_port, &format!("127.0.0.1:{}", replica.port));
    }
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    std::fs::write(dir.join("nginx.conf"), config).unwrap();
    let child = Command::new(nginx)
        .arg("-p")
        .arg(dir)
        // One process: killed, it leaves no worker behind.
        .args([
            "-e",
            "stderr",
            "-c",
            "nginx.conf",
            "-g",
            "daemon off; master_process off;",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        // Its log (a replica refusing connections, say) beside its config.
        .stderr(std::fs::File::create(dir.join("error.log")).unwrap())
        .spawn()
        .unwrap();
    let nginx = Running(child);
    wait_for_port(port, "nginx");
    nginx
}

/// `POST {base}/api/tools/{tool}` as `token`'s holder, with an
/// idempotency key if given: the status and the body.
pub(crate) async fn post(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    tool: &str,
    arguments: &Value,
    key: Option<&str>,
) -> (u16, Value) {
    let mut request = client
        .post(format!("{base}/api/tools/{tool}"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(arguments.to_string());
    if let Some(key) = key {
        request = request.header("idempotency-key", key);
    }
    match request.send().await {
        Ok(response) => {
            let status = response.status().as_u16();
            let text = response.text().await.unwrap_or_default();
            (status, serde_json::from_str(&text).unwrap_or(Value::Null))
        }
        // The connection itself failed: no answer.
        Err(_) => (0, Value::Null),
    }
}

/// The id of the approval request a 202 answer carries.
pub(crate) fn request_id(answer: &(u16, Value)) -> String {
    assert_eq!(answer.0, 202, "{answer:?}");
    answer.1["id"].as_u64().expect("a request id").to_string()
}

pub(crate) async fn count(db: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(db).await.unwrap()
}

/// Where nginx is, if installed.
pub(crate) fn nginx() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .map(PathBuf::from)
        .into_iter()
        .find(|path| path.exists())
}

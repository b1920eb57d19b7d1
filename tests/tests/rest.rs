//! The tools as a REST API beside `/mcp` (`HttpOptions::rest`, feature
//! `openapi`): each answer's status and body, the caller's view in calls
//! and in the OpenAPI document, and the document checked by
//! `openapi-spec-validator` (PyPI, pinned in
//! `tests/python/rest-requirements.txt`).

use std::collections::HashSet;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolwright::idempotency::{Idempotency, MemoryKeys};
use toolwright::mcp::{HttpOptions, McpServer, Rejection, bearer_token};
use toolwright::{
    Catalog, Container, Context, Effect, Executor, Invocation,
    approval::Digest,
    executor::Verdict,
    registry::{Registry, Selector, View},
    tool,
};

mod installs;

/// Who is calling, and the calls a person approved for them.
#[derive(Clone)]
struct Actor {
    name: &'static str,
    admin: bool,
    approved: Arc<Mutex<HashSet<Digest>>>,
}

async fn anyone<A>(_: &Actor, _: &Invocation<'_, A>) -> bool {
    true
}

async fn admins<A>(actor: &Actor, _: &Invocation<'_, A>) -> bool {
    actor.admin
}

async fn person_approved<A>(actor: &Actor, call: &Invocation<'_, A>) -> Verdict {
    match actor.approved.lock().unwrap().remove(&call.digest()) {
        true => Verdict::Allow,
        false => Verdict::Pending,
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Address {
    street: String,
    city: String,
}

/// Add two numbers.
#[tool(key = "math.add", effect = read, authorize = anyone)]
async fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// The address of a customer.
#[tool(key = "crm.address", title = "Customer address", effect = read, authorize = anyone)]
async fn address(customer_id: u64, actor: Context<Actor>) -> Result<Address, String> {
    match customer_id {
        0 => Err(format!(
            "{} asked for customer 0, who does not exist",
            actor.name
        )),
        _ => Ok(Address {
            street: "1 Main St".into(),
            city: "Springfield".into(),
        }),
    }
}

/// Rename a city.
#[tool(key = "cities.rename", effect = write, authorize = anyone, approve = person_approved)]
async fn rename_city(from: String, to: String) -> String {
    format!("{from} is now {to}")
}

/// Who did what, for admins.
#[tool(key = "admin.audit_log", effect = read, authorize = admins)]
async fn audit_log() -> Vec<String> {
    Vec::new()
}

/// Delete everything.
#[tool(key = "admin.wipe", effect = destructive, authorize = admins, approve = person_approved)]
async fn wipe() -> bool {
    true
}

struct Served {
    base: String,
    registry: Registry,
    approved: Arc<Mutex<HashSet<Digest>>>,
}

/// A server on a free loopback port with the REST API on; `ada` is an
/// admin, `bob` sees only reads.
async fn serve() -> Served {
    let catalog = Catalog::builder()
        .register::<AddArgs>()
        .register::<AddressArgs>()
        .register::<RenameCityArgs>()
        .register::<AuditLogArgs>()
        .register::<WipeArgs>()
        .build()
        .unwrap();
    let registry = Registry::new(catalog);
    let executor = Executor::builder(registry.clone(), Container::default())
        .idempotency(Idempotency::new(MemoryKeys::new()))
        .build()
        .unwrap();
    let server = McpServer::builder(executor, "rest-test", "1.2.3")
        .views(|actor: &Actor| match actor.admin {
            true => View::new(Selector::All),
            false => View::new(Selector::effect(Effect::Read)),
        })
        .build();
    let approved = Arc::new(Mutex::new(HashSet::new()));
    let shared = approved.clone();
    let authenticate = move |parts: &http::request::Parts| match bearer_token(&parts.headers) {
        Some("ada-token") => Ok(Actor {
            name: "ada",
            admin: true,
            approved: shared.clone(),
        }),
        Some("bob-token") => Ok(Actor {
            name: "bob",
            admin: false,
            approved: shared.clone(),
        }),
        _ => Err(Rejection::unauthorized()),
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let options = HttpOptions::default().rest(true).max_body_bytes(4096);
    tokio::spawn(server.serve_http_on(listener, authenticate, options));
    Served {
        base,
        registry,
        approved,
    }
}

/// POSTs `body` (as `content_type`) to `/api/tools/{tool}` as `token`'s
/// holder: the status and the body as JSON (`null` if it is none).
async fn post(
    served: &Served,
    token: &str,
    tool: &str,
    content_type: &str,
    body: impl Into<reqwest::Body>,
) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/api/tools/{tool}", served.base))
        .bearer_auth(token)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn call(served: &Served, token: &str, tool: &str, arguments: Value) -> (u16, Value) {
    post(
        served,
        token,
        tool,
        "application/json",
        arguments.to_string(),
    )
    .await
}

async fn document(served: &Served, token: &str) -> Value {
    let response = reqwest::Client::new()
        .get(format!("{}/api/openapi.json", served.base))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

#[tokio::test]
async fn a_call_answers_its_result_or_a_status_that_says_why_not() {
    let served = serve().await;
    assert_eq!(
        call(&served, "bob-token", "add", json!({"a": 2, "b": 3})).await,
        (200, json!(5))
    );
    let (status, body) = call(&served, "bob-token", "address", json!({"customer_id": 7})).await;
    assert_eq!((status, &body["city"]), (200, &json!("Springfield")));

    // The tool ran and failed: 400, with what a model would be told (the
    // error's own text, which may hold anything, stays in the logs).
    let (status, body) = call(&served, "bob-token", "address", json!({"customer_id": 0})).await;
    assert_eq!((status, body), (400, json!({"error": "The tool failed."})));

    // Arguments that break the schema: 422, with each violation's path.
    let (status, body) = call(&served, "bob-token", "add", json!({"a": "two", "b": 3})).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["violations"][0]["path"], "/a");
    let (status, body) = call(&served, "bob-token", "add", json!({"a": 1, "b": 2, "c": 3})).await;
    assert_eq!(status, 422, "an unknown field: {body}");

    // Outside the caller's view, unknown, or disabled: 404 alike.
    assert_eq!(call(&served, "bob-token", "wipe", json!({})).await.0, 404);
    assert_eq!(call(&served, "bob-token", "launch", json!({})).await.0, 404);
    served
        .registry
        .disable(&Selector::name("add"), "maintenance")
        .unwrap();
    assert_eq!(
        call(&served, "bob-token", "add", json!({"a": 1, "b": 2}))
            .await
            .0,
        404
    );

    // In the view, and refused by the tool's own check: 403.
    let (status, body) = call(&served, "bob-token", "audit_log", json!({})).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        call(&served, "ada-token", "audit_log", json!({})).await,
        (200, json!([]))
    );
    assert_eq!(call(&served, "ada-token", "wipe", json!({})).await.0, 202);
}

#[tokio::test]
async fn a_write_waits_for_approval_with_202_then_runs_once_approved() {
    let served = serve().await;
    let arguments = json!({"from": "Bombay", "to": "Mumbai"});
    let (status, request) = call(&served, "ada-token", "rename_city", arguments.clone()).await;
    assert_eq!(status, 202, "{request}");
    assert_eq!(request["key"], "cities.rename");
    assert_eq!(request["arguments"], arguments);
    let digest: Digest = serde_json::from_value(request["digest"].clone()).unwrap();

    // A person approves exactly this call; it runs once.
    served.approved.lock().unwrap().insert(digest);
    assert_eq!(
        call(&served, "ada-token", "rename_city", arguments.clone()).await,
        (200, json!("Bombay is now Mumbai"))
    );
    assert_eq!(
        call(&served, "ada-token", "rename_city", arguments).await.0,
        202
    );
}

/// [`call`] with an `Idempotency-Key` header.
async fn call_keyed(served: &Served, key: &str, tool: &str, arguments: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{}/api/tools/{tool}", served.base))
        .bearer_auth("ada-token")
        .header("content-type", "application/json")
        .header("idempotency-key", key)
        .body(arguments.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_write_retried_with_its_idempotency_key_answers_its_result_without_running_again() {
    let served = serve().await;
    let arguments = json!({"from": "Madras", "to": "Chennai"});
    let digest = Digest::of("cities.rename", &arguments);
    served.approved.lock().unwrap().insert(digest);
    let ran = call_keyed(&served, "rename-1", "rename_city", arguments.clone()).await;
    assert_eq!(ran, (200, json!("Madras is now Chennai")));
    // The approval is spent: only the key's record can answer 200 now.
    let retried = call_keyed(&served, "rename-1", "rename_city", arguments.clone()).await;
    assert_eq!(retried, (200, json!("Madras is now Chennai")));
    assert_eq!(
        call(&served, "ada-token", "rename_city", arguments).await.0,
        202
    );

    let other = json!({"from": "Madras", "to": "Elsewhere"});
    let (status, body) = call_keyed(&served, "rename-1", "rename_city", other.clone()).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("idempotency key"),
        "{body}"
    );
    let long = "k".repeat(256);
    let (status, body) = call_keyed(&served, &long, "rename_city", other).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("Idempotency-Key"),
        "{body}"
    );
}

#[tokio::test]
async fn bodies_that_are_not_json_objects_within_the_limit_are_refused() {
    let served = serve().await;
    let (status, body) = post(&served, "bob-token", "add", "text/plain", "a=1&b=2").await;
    assert_eq!(status, 415, "{body}");
    let (status, body) = post(
        &served,
        "bob-token",
        "add",
        "application/json",
        "{\"a\": 1,",
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("the body is not JSON")
    );
    let (status, _) = post(&served, "bob-token", "add", "application/json", "[1, 2]").await;
    assert_eq!(status, 422, "arguments are an object");
    let big = format!("{{\"a\": 1, \"b\": 2, \"pad\": \"{}\"}}", "x".repeat(8192));
    assert_eq!(
        post(&served, "bob-token", "add", "application/json", big)
            .await
            .0,
        413
    );

    // No credentials: 401, before anything else.
    let response = reqwest::Client::new()
        .post(format!("{}/api/tools/add", served.base))
        .header("content-type", "application/json")
        .body("{\"a\": 1, \"b\": 2}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
}

#[tokio::test]
async fn the_document_describes_the_callers_tools_and_validates_as_openapi_3_1() {
    let served = serve().await;
    let bob = document(&served, "bob-token").await;
    let mut paths: Vec<&String> = bob["paths"].as_object().unwrap().keys().collect();
    paths.sort();
    assert_eq!(
        paths,
        ["/tools/add", "/tools/address", "/tools/audit_log"],
        "bob's view: reads"
    );
    assert_eq!(bob["servers"], json!([{"url": "/api"}]));
    assert_eq!(
        bob["info"],
        json!({"title": "rest-test", "version": "1.2.3"})
    );
    let address = &bob["paths"]["/tools/address"]["post"];
    assert_eq!(address["summary"], "Customer address");
    assert_eq!(address["x-toolwright-effect"], "read");
    let output = &address["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(output["required"], json!(["street", "city"]));

    let ada = document(&served, "ada-token").await;
    let rename = &ada["paths"]["/tools/rename_city"]["post"];
    assert_eq!(rename["x-toolwright-key"], "cities.rename");
    assert_eq!(
        rename["responses"]["202"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/ApprovalRequest"
    );
    // A write takes an idempotency key; a read has nothing to take one for.
    assert_eq!(rename["parameters"][0]["name"], "Idempotency-Key");
    assert_eq!(rename["parameters"][0]["in"], "header");
    assert!(rename["responses"].get("409").is_some());
    assert!(address.get("parameters").is_none());

    let Some(python) = python_or_skip("the_document_validates_as_openapi_3_1") else {
        return;
    };
    let file = std::env::temp_dir().join(format!("toolwright-openapi-{}.json", std::process::id()));
    std::fs::write(&file, ada.to_string()).unwrap();
    let validator = python.with_file_name("openapi-spec-validator");
    let checked = Command::new(validator)
        .args(["--schema", "3.1"])
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert!(
        checked.status.success(),
        "{}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

/// Python with the REST test tools; or `None` after a one-line message
/// when they cannot be installed here. On CI (`CI=true`) that fails.
fn python_or_skip(test: &str) -> Option<std::path::PathBuf> {
    match installs::python_venv("python-rest", "rest-requirements.txt") {
        Ok(python) => Some(python),
        Err(why) if !installs::must_run() => {
            eprintln!("skipped {test}: the Python tools are unavailable ({why})");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

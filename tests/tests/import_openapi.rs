//! The operations of an OpenAPI document imported into the registry: a
//! FastAPI application (`tests/python/pets_api.py`, FastAPI and uvicorn
//! from PyPI, pinned in `tests/python/openapi-requirements.txt` and
//! installed into a virtualenv under the target directory on the first
//! run), started by each test, imported from the document FastAPI
//! generates, and called through the executor.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolwright::approval::{Approvals, MemoryLedger};
use toolwright::import::openapi::{Imported, Service};
use toolwright::import::{ImportError, RemoteTools};
use toolwright::registry::Registry;
use toolwright::{CallError, Catalog, Container, Effect, Executor, Principal};

mod installs;

struct User(&'static str);

impl Principal for User {
    fn id(&self) -> &str {
        self.0
    }
}

/// The service, killed when the test ends, passed or not.
struct Pets {
    child: Child,
    base: String,
    document: Value,
}

impl Drop for Pets {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Pets {
    /// How many requests reached one of its routes.
    async fn calls(&self) -> u64 {
        let text = reqwest::get(format!("{}/calls", self.base))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str::<Value>(&text).unwrap()["count"]
            .as_u64()
            .unwrap()
    }
}

/// The service on a free loopback port, with its document; or `None`
/// after a one-line message when FastAPI cannot be installed here. On CI
/// (`CI=true`) that fails instead.
async fn pets_or_skip(test: &str) -> Option<Pets> {
    let python = match installs::python_venv("python-openapi", "openapi-requirements.txt") {
        Ok(python) => python,
        Err(why) if !installs::must_run() => {
            eprintln!("skipped {test}: FastAPI is unavailable ({why})");
            return None;
        }
        Err(why) => panic!("{why}"),
    };
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(python)
        .args(["-m", "uvicorn", "pets_api:app", "--host", "127.0.0.1"])
        .args(["--port", &port.to_string(), "--log-level", "warning"])
        .arg("--app-dir")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("python"))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let mut pets = Pets {
        child,
        base,
        document: Value::Null,
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Ok(answer) = reqwest::get(format!("{}/openapi.json", pets.base)).await {
            pets.document = serde_json::from_str(&answer.text().await.unwrap()).unwrap();
            return Some(pets);
        }
        assert!(Instant::now() < deadline, "the service did not start");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// An executor over a service's imported operations, and its approvals.
fn executor_of(imported: Imported) -> (Executor, Approvals) {
    let registry = Registry::new(Catalog::empty());
    imported.register(&registry).unwrap();
    let approvals = Approvals::new(MemoryLedger::new());
    let executor = Executor::builder(registry, Container::default())
        .approvals(approvals.clone())
        .build()
        .unwrap();
    (executor, approvals)
}

/// The text of a call's tool error, and its source's.
fn tool_error(result: Result<Value, CallError>) -> String {
    match result {
        Err(CallError::Tool { source, .. }) => source.to_string(),
        other => panic!("not a tool error: {other:?}"),
    }
}

#[tokio::test]
async fn a_fastapi_service_is_served_qualified_read_calls_run_and_writes_wait_for_approval() {
    let test = "a_fastapi_service_is_served_qualified_read_calls_run_and_writes_wait_for_approval";
    let Some(pets) = pets_or_skip(test).await else {
        return;
    };
    let imported = Service::new("pets", &pets.base, pets.document.clone())
        .tools(RemoteTools::all())
        .approvals::<User>()
        .bearer("s3cret-token")
        .import()
        .unwrap();

    // Every operation but the one with a cookie, qualified, its effect by
    // its method; `GET /pets/{pet_id}` named from FastAPI's operationId.
    let mut served: Vec<_> = imported
        .tools()
        .iter()
        .map(|t| (t.name().to_owned(), t.entry().effect()))
        .collect();
    served.sort_by(|a, b| a.0.cmp(&b.0));
    let expected = [
        ("pets_big", Effect::Read),
        ("pets_calls", Effect::Read),
        ("pets_createPet", Effect::Write),
        ("pets_deletePet", Effect::Destructive),
        ("pets_fail", Effect::Read),
        ("pets_get_pet_pets__pet_id__get", Effect::Read),
        ("pets_greet", Effect::Read),
        ("pets_headers", Effect::Read),
        ("pets_listPets", Effect::Read),
        ("pets_slow", Effect::Read),
    ];
    let expected: Vec<_> = expected.iter().map(|(n, e)| (n.to_string(), *e)).collect();
    assert_eq!(served, expected);
    let skipped: Vec<_> = imported
        .skipped()
        .iter()
        .map(|s| (s.name.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        skipped,
        [(
            "whoAmI",
            "its parameter `session` is in `cookie`, which this import does not send"
        )]
    );
    // The header the application fills is in no schema; the body is
    // FastAPI's `PetIn`, from the document's components.
    let create = imported
        .tools()
        .iter()
        .find(|t| t.name() == "pets_createPet")
        .unwrap()
        .entry()
        .input_schema()
        .clone();
    assert_eq!(
        create["properties"].as_object().unwrap().len(),
        1,
        "{create}"
    );
    assert_eq!(create["required"], json!(["body"]));
    assert_eq!(create["properties"]["body"]["$ref"], "#/$defs/PetIn");
    assert_eq!(
        create["$defs"]["PetIn"]["properties"]["name"]["description"],
        "The pet's name."
    );

    let (executor, approvals) = executor_of(imported);
    let ann = User("ann");
    let call = |name: &'static str, arguments: Value| executor.invoke(name, arguments, &ann);

    assert_eq!(call("pets_listPets", json!({})).await.unwrap(), json!([]));
    let before = pets.calls().await;
    // Checked here against the document's `le=100`: nothing is sent.
    let invalid = call("pets_listPets", json!({"limit": 1000})).await;
    assert!(
        matches!(invalid, Err(CallError::InvalidArguments { .. })),
        "{invalid:?}"
    );
    assert_eq!(
        pets.calls().await,
        before,
        "an invalid call reached the service"
    );

    // A write waits for another person, then runs once.
    let rex = json!({"body": {"name": "Rex", "kind": "dog"}});
    let asked = call("pets_createPet", rex.clone()).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    assert_eq!(
        pets.calls().await,
        before,
        "an unapproved write reached the service"
    );
    approvals
        .approve(request.id.unwrap(), &User("bob"), "fine")
        .await
        .unwrap();
    let created = call("pets_createPet", rex.clone()).await.unwrap();
    assert_eq!(
        created,
        json!({"id": 1, "name": "Rex", "kind": "dog", "age": null})
    );
    let again = call("pets_createPet", rex).await;
    assert!(
        matches!(again, Err(CallError::ApprovalRequired(_))),
        "{again:?}"
    );

    // Query and path parameters.
    let dogs = call("pets_listPets", json!({"kind": "dog", "limit": 5})).await;
    assert_eq!(dogs.unwrap().as_array().unwrap().len(), 1);
    let cats = call("pets_listPets", json!({"kind": "cat"})).await;
    assert_eq!(cats.unwrap(), json!([]));
    let rex = call("pets_get_pet_pets__pet_id__get", json!({"pet_id": 1})).await;
    assert_eq!(rex.unwrap()["name"], "Rex");
    // A path parameter is percent-encoded (`?` would end the path);
    // a text answer is the text.
    let hello = call("pets_greet", json!({"name": "Ann & Bob?"})).await;
    assert_eq!(hello.unwrap(), json!("Hello, Ann & Bob?!"));

    // Another status is a tool error with the status and what it said.
    let missing = call("pets_get_pet_pets__pet_id__get", json!({"pet_id": 9})).await;
    assert_eq!(
        tool_error(missing),
        r#"the service answered 404 Not Found: {"detail":"no such pet"}"#
    );

    // Destructive: approved too; an empty answer says its status.
    let asked = call("pets_deletePet", json!({"pet_id": 1})).await;
    let Err(CallError::ApprovalRequired(request)) = asked else {
        panic!("{asked:?}")
    };
    approvals
        .approve(request.id.unwrap(), &User("bob"), "fine")
        .await
        .unwrap();
    let deleted = call("pets_deletePet", json!({"pet_id": 1})).await;
    assert_eq!(deleted.unwrap(), json!("204 No Content"));
    assert_eq!(call("pets_listPets", json!({})).await.unwrap(), json!([]));
}

#[tokio::test]
async fn the_credential_is_the_applications_and_a_long_answer_is_refused_at_the_limit() {
    let test = "the_credential_is_the_applications_and_a_long_answer_is_refused_at_the_limit";
    let Some(pets) = pets_or_skip(test).await else {
        return;
    };
    let only = || RemoteTools::only(["listPets", "big"]);

    // Without the application's credential the service refuses, and the
    // model cannot supply one: `authorization` is no argument.
    let (executor, _) = executor_of(
        Service::new("pets", &pets.base, pets.document.clone())
            .tools(only())
            .import()
            .unwrap(),
    );
    let ann = User("ann");
    let refused = executor.invoke("pets_listPets", json!({}), &ann).await;
    assert_eq!(
        tool_error(refused),
        r#"the service answered 401 Unauthorized: {"detail":"who are you?"}"#
    );
    let smuggled = json!({"authorization": "Bearer s3cret-token"});
    let smuggled = executor.invoke("pets_listPets", smuggled, &ann).await;
    assert!(
        matches!(smuggled, Err(CallError::InvalidArguments { .. })),
        "{smuggled:?}"
    );

    // 3 MB of text, over a 1 MB limit: an error naming it.
    let service = Service::new("pets", &pets.base, pets.document.clone())
        .tools(only())
        .bearer("s3cret-token")
        .max_response(1_000_000);
    let (executor, _) = executor_of(service.import().unwrap());
    let big = executor.invoke("pets_big", json!({}), &ann).await;
    assert_eq!(
        tool_error(big),
        "the answer (200 OK) is longer than 1000000 bytes, the import's `max_response`"
    );
    // The credential's value shows in no `Debug`.
    let service = Service::new("pets", &pets.base, Value::Null).bearer("s3cret-token");
    assert!(!format!("{service:?}").contains("s3cret"));
}

#[tokio::test]
async fn an_operation_without_an_operation_id_is_named_and_allowed_by_method_and_path() {
    let test = "an_operation_without_an_operation_id_is_named_and_allowed_by_method_and_path";
    let Some(pets) = pets_or_skip(test).await else {
        return;
    };
    let mut document = pets.document.clone();
    let get = &mut document["paths"]["/pets/{pet_id}"]["get"];
    get.as_object_mut().unwrap().remove("operationId").unwrap();
    let imported = Service::new("pets", &pets.base, document)
        .tools(RemoteTools::only(["GET /pets/{pet_id}"]))
        .bearer("s3cret-token")
        .import()
        .unwrap();
    let tool = &imported.tools()[0];
    assert_eq!(
        (tool.key(), tool.name()),
        ("pets.get_pets_pet_id", "pets_get_pets_pet_id")
    );
    let (executor, _) = executor_of(imported);
    let missing = executor.invoke("pets_get_pets_pet_id", json!({"pet_id": 9}), &User("ann"));
    assert_eq!(
        tool_error(missing.await),
        r#"the service answered 404 Not Found: {"detail":"no such pet"}"#
    );
}

#[tokio::test]
async fn the_models_header_and_the_applications_api_key_are_both_sent() {
    let test = "the_models_header_and_the_applications_api_key_are_both_sent";
    let Some(pets) = pets_or_skip(test).await else {
        return;
    };
    let imported = Service::new("pets", &pets.base, pets.document.clone())
        .tools(RemoteTools::only(["headers"]))
        .bearer("s3cret-token")
        .header("X-Api-Key", "k-123")
        .import()
        .unwrap();
    // The model fills the tag; the key is the application's, in no schema.
    let schema = imported.tools()[0].entry().input_schema().clone();
    let properties: Vec<_> = schema["properties"].as_object().unwrap().keys().collect();
    assert_eq!(properties, ["x-request-tag"], "{schema}");
    assert_eq!(schema["required"], json!(["x-request-tag"]));
    let (executor, _) = executor_of(imported);
    let ann = User("ann");
    let sent = executor.invoke("pets_headers", json!({"x-request-tag": "blue"}), &ann);
    assert_eq!(
        sent.await.unwrap(),
        json!({"tag": "blue", "api_key": "k-123"})
    );
    let smuggled = json!({"x-request-tag": "blue", "x-api-key": "mine"});
    let smuggled = executor.invoke("pets_headers", smuggled, &ann).await;
    assert!(
        matches!(smuggled, Err(CallError::InvalidArguments { .. })),
        "{smuggled:?}"
    );
}

#[tokio::test]
async fn a_call_longer_than_the_timeout_fails_and_an_error_body_is_cut_at_1000_characters() {
    let test = "a_call_longer_than_the_timeout_fails_and_an_error_body_is_cut_at_1000_characters";
    let Some(pets) = pets_or_skip(test).await else {
        return;
    };
    let imported = Service::new("pets", &pets.base, pets.document.clone())
        .tools(RemoteTools::only(["slow", "fail"]))
        .bearer("s3cret-token")
        .timeout(Duration::from_millis(300))
        .import()
        .unwrap();
    let (executor, _) = executor_of(imported);
    let ann = User("ann");

    // The service sleeps 10 s; the call ends at the import's timeout.
    let started = Instant::now();
    let slow = executor.invoke("pets_slow", json!({}), &ann).await;
    assert!(
        matches!(slow, Err(CallError::Timeout { after, .. }) if after == Duration::from_millis(300)),
        "{slow:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // 3,000 characters (6,000 bytes) of error: the first 1,000, marked cut.
    let failed = tool_error(executor.invoke("pets_fail", json!({}), &ann).await);
    let said = format!("{} […]", "é".repeat(1_000));
    assert_eq!(
        failed,
        format!("the service answered 500 Internal Server Error: {said}")
    );
}

#[tokio::test]
async fn what_the_application_did_not_allow_is_refused_at_import_naming_it() {
    let document =
        json!({"openapi": "3.0.3", "paths": {"/pets": {"get": {"operationId": "listPets"}}}});
    let service = |base: &str| Service::new("pets", base, document.clone());

    let refused = service("http://127.0.0.1:1")
        .tools(RemoteTools::only(["listPets", "deleteAll"]))
        .import()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the upstream offers no tool named `deleteAll`"
    );
    let refused = service("http://pets.example.com").import().unwrap_err();
    assert!(
        matches!(&refused, ImportError::UrlNotSecure { url } if url == "http://pets.example.com"),
        "{refused}"
    );
    let refused = service("https://pets.example.com")
        .header("X-Api-Key", "line\nbreak")
        .import()
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "the credential header `X-Api-Key` is not a valid header name and value"
    );
    let refused = Service::new("Pets!", "https://pets.example.com", document.clone())
        .import()
        .unwrap_err();
    assert!(matches!(refused, ImportError::InvalidNamespace { .. }));
    // Only what is named is served.
    let imported = service("https://pets.example.com").import().unwrap();
    assert!(imported.tools().is_empty() && imported.skipped().is_empty());

    // Nothing listens there: the call's error, with its source.
    let (executor, _) = executor_of(
        service("http://127.0.0.1:1")
            .tools(RemoteTools::all())
            .import()
            .unwrap(),
    );
    let failed = executor
        .invoke("pets_listPets", json!({}), &User("ann"))
        .await;
    let Err(CallError::Tool { source, .. }) = failed else {
        panic!("{failed:?}")
    };
    assert!(
        source.to_string().contains("error sending request"),
        "{source}"
    );
}

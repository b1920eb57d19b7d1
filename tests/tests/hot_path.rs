//! What a call does not do (build schemas), and that calls can move
//! between threads.

use std::borrow::Cow;
use std::sync::atomic::{AtomicUsize, Ordering};

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use serde_json::json;
use toolwright::{CallError, Catalog, Container, Executor, Invocation, tool};

static SCHEMAS_BUILT: AtomicUsize = AtomicUsize::new(0);

/// An input type that counts how often its schema is generated.
#[derive(Serialize, Deserialize, Debug)]
struct Counted(u32);

impl JsonSchema for Counted {
    fn schema_name() -> Cow<'static, str> {
        "Counted".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        SCHEMAS_BUILT.fetch_add(1, Ordering::SeqCst);
        json_schema!({"type": "integer", "minimum": 0, "maximum": 10})
    }
}

async fn only_small<A>(_: &(), call: &Invocation<'_, A>) -> bool {
    call.name() != "forbidden"
}

/// Double a small number.
#[tool(key = "math.double", effect = read, authorize = only_small)]
async fn double(n: Counted) -> u32 {
    n.0 * 2
}

#[tokio::test]
async fn calls_build_no_schema() {
    let catalog = Catalog::builder().register::<DoubleArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let built = SCHEMAS_BUILT.load(Ordering::SeqCst);
    assert!(built >= 1, "the catalog built the schema");
    for n in 0..50 {
        let result = executor.invoke("double", json!({"n": n % 12}), &()).await;
        match n % 12 {
            0..=10 => assert_eq!(result.unwrap(), json!((n % 12) * 2)),
            _ => assert!(matches!(result, Err(CallError::InvalidArguments { .. }))),
        }
        let typed = executor.call(DoubleArgs { n: Counted(3) }, &()).await;
        assert_eq!(typed.unwrap(), 6);
    }
    assert_eq!(
        SCHEMAS_BUILT.load(Ordering::SeqCst),
        built,
        "no schema per call"
    );
}

/// Triple a number. (Not [`double`]: its schema's builds are counted by
/// the test above, which may run at the same time.)
#[tool(key = "math.triple", effect = read, authorize = only_small)]
async fn triple(n: u32) -> u32 {
    n * 3
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_on_any_thread() {
    let catalog = Catalog::builder().register::<TripleArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let executor = executor.clone();
            tokio::spawn(async move { executor.invoke("triple", json!({"n": n}), &()).await })
        })
        .collect();
    for (n, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().unwrap(), json!(n * 3));
    }
}

/// Look up a customer: plain inputs, which deserializing checks whole, so
/// the executor compiles this tool's validator only when a call needs it.
#[tool(key = "crm.customer", effect = read, authorize = public)]
async fn customer(id: u32, name: Option<String>, tags: Vec<String>) -> String {
    format!("{id} {name:?} {tags:?}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_whose_validator_is_compiled_at_its_first_invalid_call_reports_every_violation() {
    let catalog = Catalog::builder()
        .register::<CustomerArgs>()
        .build()
        .unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let bad = json!({"id": -1, "name": 7, "tags": "vip"});
    // Several first calls at once, then one more: each sees every violation.
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let (executor, bad) = (executor.clone(), bad.clone());
            tokio::spawn(async move { executor.invoke("customer", bad, &()).await })
        })
        .collect();
    let mut results = Vec::new();
    for call in calls {
        results.push(call.await.unwrap());
    }
    results.push(executor.invoke("customer", bad, &()).await);
    for result in results {
        let Err(CallError::InvalidArguments { violations, .. }) = result else {
            panic!("{result:?}");
        };
        let paths: Vec<&str> = violations.0.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["/id", "/name", "/tags"], "{violations:?}");
    }
    // Arguments that are not an object are checked by the same validator.
    let listed = executor.invoke("customer", json!([1, null, []]), &()).await;
    assert!(
        matches!(listed, Err(CallError::InvalidArguments { .. })),
        "{listed:?}"
    );
    let good = executor
        .invoke("customer", json!({"id": 1, "tags": []}), &())
        .await;
    assert_eq!(good.unwrap(), json!("1 None []"));
}

/// Read a page of results: a range, which only the validator checks.
#[tool(key = "crm.page", effect = read, authorize = public)]
async fn page(#[schemars(range(min = 1, max = 100))] size: u32) -> u32 {
    size
}

#[tokio::test]
async fn a_tool_whose_validator_is_compiled_at_its_first_call_checks_that_call() {
    let executor = || {
        let catalog = Catalog::builder().register::<PageArgs>().build().unwrap();
        Executor::new(catalog, Container::default()).unwrap()
    };
    fn out_of_range<T>(result: Result<T, CallError>) -> bool {
        match result {
            Err(CallError::InvalidArguments { violations, .. }) => violations.0[0].path == "/size",
            _ => false,
        }
    }
    // The first call's arguments are checked, whether they pass or not.
    let first_passes = executor();
    assert_eq!(
        first_passes
            .invoke("page", json!({"size": 5}), &())
            .await
            .unwrap(),
        5
    );
    assert!(out_of_range(
        first_passes.invoke("page", json!({"size": 0}), &()).await
    ));
    let first_fails = executor();
    assert!(out_of_range(
        first_fails.invoke("page", json!({"size": 101}), &()).await
    ));
    assert!(out_of_range(
        first_fails.call(PageArgs { size: 0 }, &()).await
    ));
}

/// An input whose hand-written schema points at a definition it lacks.
#[derive(Serialize, Deserialize, Debug)]
struct Dangling(u32);

impl JsonSchema for Dangling {
    fn schema_name() -> Cow<'static, str> {
        "Dangling".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"$ref": "#/$defs/Nowhere"})
    }
}

/// An input whose hand-written schema names a type JSON Schema lacks.
#[derive(Serialize, Deserialize, Debug)]
struct Misspelt(String);

impl JsonSchema for Misspelt {
    fn schema_name() -> Cow<'static, str> {
        "Misspelt".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "strng"})
    }
}

/// Take an input whose schema points nowhere.
#[tool(key = "broken.dangling", effect = read, authorize = public)]
async fn dangling(input: Dangling) -> u32 {
    input.0
}

/// Take an input whose schema names no type.
#[tool(key = "broken.misspelt", effect = read, authorize = public)]
async fn misspelt(input: Misspelt) -> String {
    input.0
}

#[test]
fn plain_looking_schemas_that_do_not_compile_are_reported_when_the_executor_is_built() {
    let catalog = Catalog::builder()
        .register::<DanglingArgs>()
        .register::<MisspeltArgs>()
        .build()
        .unwrap();
    let error = Executor::new(catalog, Container::default()).unwrap_err();
    let broken: Vec<&str> = error
        .problems
        .iter()
        .map(|problem| match problem {
            toolwright::executor::ExecutorProblem::InvalidSchema { tool, .. } => tool.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(broken, ["broken.dangling", "broken.misspelt"]);
}

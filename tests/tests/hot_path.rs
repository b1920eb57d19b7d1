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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_run_on_any_thread() {
    let catalog = Catalog::builder().register::<DoubleArgs>().build().unwrap();
    let executor = Executor::new(catalog, Container::default()).unwrap();
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let executor = executor.clone();
            tokio::spawn(async move { executor.invoke("double", json!({"n": n}), &()).await })
        })
        .collect();
    for (n, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().unwrap(), json!(n * 2));
    }
}

//! Arbitrary bytes as the arguments of every tool of a representative
//! catalog: parsed as JSON when they are JSON, sent as a string otherwise.
//! The executor must answer with a result or `InvalidArguments`, never
//! panic, and run a body only on arguments its advertised schema accepts.
//!
//! `cargo fuzz run invoke` (from the repository root).
#![no_main]

use std::collections::BTreeMap;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolwright::{CallError, Catalog, Container, Executor, tool};

static BODIES: AtomicUsize = AtomicUsize::new(0);

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Square { side: u32 },
    Point,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Address {
    #[schemars(length(min = 1, max = 12))]
    street: String,
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
    floor: Option<i8>,
}

/// Nested types, an internally tagged enum, options.
#[tool(key = "fuzz.nested", effect = read, authorize = public)]
async fn nested(address: Address, shapes: Vec<Shape>, size: Option<Size>) -> usize {
    BODIES.fetch_add(1, Ordering::SeqCst);
    let _ = (address, size);
    shapes.len()
}

/// Constraints and a default.
#[tool(key = "fuzz.constrained", effect = read, authorize = public)]
async fn constrained(
    #[schemars(range(min = -5, max = 5))] small: i8,
    #[schemars(length(min = 1, max = 3))] list: Vec<u16>,
    #[default = 7] seven: u64,
    counts: BTreeMap<String, u32>,
) -> u64 {
    BODIES.fetch_add(1, Ordering::SeqCst);
    let _ = (small, list, counts);
    seven
}

/// Only types: the executor may skip the validator.
#[tool(key = "fuzz.plain", effect = read, authorize = public)]
async fn plain(a: i64, b: bool, c: Option<String>, d: Vec<u8>) -> i64 {
    BODIES.fetch_add(1, Ordering::SeqCst);
    let _ = (b, c, d);
    a
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    executor: Executor,
    validators: Vec<(&'static str, jsonschema::Validator)>,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let catalog = Catalog::discover().unwrap();
    let validators = catalog
        .iter()
        .map(|t| {
            (
                t.name(),
                jsonschema::validator_for(t.input_schema()).unwrap(),
            )
        })
        .collect();
    Fixture {
        runtime: tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap(),
        executor: Executor::new(catalog, Container::default()).unwrap(),
        validators,
    }
});

fuzz_target!(|data: &[u8]| {
    let arguments = serde_json::from_slice::<Value>(data)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()));
    let f = &*FIXTURE;
    for (name, validator) in &f.validators {
        let before = BODIES.load(Ordering::SeqCst);
        let result = f
            .runtime
            .block_on(f.executor.invoke(name, arguments.clone(), &()));
        let ran = BODIES.load(Ordering::SeqCst) - before;
        match result {
            Ok(_) => {
                assert!(validator.is_valid(&arguments), "{name} ran on {arguments}");
                assert_eq!(ran, 1);
            }
            Err(CallError::InvalidArguments { .. }) => {
                assert_eq!(ran, 0, "{name} ran on invalid {arguments}")
            }
            Err(other) => panic!("{name}: unexpected {other:?} for {arguments}"),
        }
    }
});

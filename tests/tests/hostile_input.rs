//! Arbitrary JSON (depth ≤ 6) sent to every tool of a representative
//! catalog: the executor answers with a result or `InvalidArguments`, never
//! panics, and never runs a body on arguments its schema rejects.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use toolwright::{CallError, Catalog, Container, Executor, tool};

static BODIES: AtomicUsize = AtomicUsize::new(0);
// Tests that count body runs take turns: the counter is shared.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Square { side: u32 },
    Point,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Inner {
    #[schemars(length(max = 4))]
    name: String,
    value: Option<i32>,
}

/// Nested types, options and an internally tagged enum.
#[tool(key = "hostile.nested", effect = read, authorize = public)]
async fn nested(inner: Inner, shapes: Vec<Shape>, flag: Option<bool>) -> usize {
    BODIES.fetch_add(1, Ordering::SeqCst);
    let _ = (inner, flag);
    shapes.len()
}

/// Constraints and a default.
#[tool(key = "hostile.constrained", effect = read, authorize = public)]
async fn constrained(
    #[schemars(range(min = -5, max = 5))] small: i8,
    #[schemars(regex(pattern = r"^[a-z]+$"))] word: String,
    #[default = 7] seven: u64,
    #[schemars(length(min = 1, max = 3))] list: Vec<u8>,
) -> u64 {
    BODIES.fetch_add(1, Ordering::SeqCst);
    let _ = (small, word, list);
    seven
}

/// Maps and sets.
#[tool(key = "hostile.collections", effect = read, authorize = public)]
async fn collections(
    counts: BTreeMap<String, u16>,
    tags: HashSet<String>,
    pair: (u8, String),
) -> usize {
    BODIES.fetch_add(1, Ordering::SeqCst);
    counts.len() + tags.len() + usize::from(pair.0)
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug)]
struct Point {
    x: i32,
    y: i32,
}

/// A nested struct and nothing else: its schema states only types.
#[tool(key = "hostile.point", effect = read, authorize = public)]
async fn plot(point: Point) -> i64 {
    BODIES.fetch_add(1, Ordering::SeqCst);
    i64::from(point.x) + i64::from(point.y)
}

/// No arguments at all.
#[tool(key = "hostile.none", effect = read, authorize = public)]
async fn nothing() -> bool {
    BODIES.fetch_add(1, Ordering::SeqCst);
    true
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z]{0,6}".prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
        prop_oneof![
            Just("circle"),
            Just("square"),
            Just("point"),
            Just("name"),
            Just("kind")
        ]
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let keys = prop_oneof![
            Just("inner".to_owned()),
            Just("shapes".to_owned()),
            Just("flag".to_owned()),
            Just("name".to_owned()),
            Just("value".to_owned()),
            Just("kind".to_owned()),
            Just("radius".to_owned()),
            Just("small".to_owned()),
            Just("word".to_owned()),
            Just("list".to_owned()),
            Just("counts".to_owned()),
            Just("tags".to_owned()),
            Just("pair".to_owned()),
            Just("point".to_owned()),
            "[a-z]{1,4}",
        ];
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map(keys, inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    executor: Executor,
    validators: Vec<(String, jsonschema::Validator)>,
}

fn fixture() -> Fixture {
    let catalog = Catalog::discover().unwrap();
    let validators = catalog
        .iter()
        .map(|t| {
            (
                t.name().to_owned(),
                jsonschema::validator_for(t.input_schema()).unwrap(),
            )
        })
        .collect();
    Fixture {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        executor: Executor::new(catalog, Container::default()).unwrap(),
        validators,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_500))]

    #[test]
    fn arbitrary_json_never_panics_and_never_runs_a_body_on_invalid_input(args in json_value()) {
        thread_local!(static FIXTURE: Fixture = fixture());
        let _serial = SERIAL.blocking_lock();
        FIXTURE.with(|f| {
            for (name, validator) in &f.validators {
                let before = BODIES.load(Ordering::SeqCst);
                let result = f.runtime.block_on(f.executor.invoke(name, args.clone(), &()));
                let ran = BODIES.load(Ordering::SeqCst) - before;
                match result {
                    Ok(_) => {
                        prop_assert!(validator.is_valid(&args), "{name} ran on {args}");
                        prop_assert_eq!(ran, 1);
                    }
                    Err(CallError::InvalidArguments { .. }) => prop_assert_eq!(ran, 0, "{} ran on invalid {}", name, args),
                    Err(other) => prop_assert!(false, "{name}: unexpected {other:?} for {args}"),
                }
            }
            Ok(())
        })?;
    }
}

#[tokio::test]
async fn valid_calls_of_every_hostile_tool_run() {
    let _serial = SERIAL.lock().await;
    let executor = Executor::new(Catalog::discover().unwrap(), Container::default()).unwrap();
    let cases = [
        (
            "nested",
            json!({"inner": {"name": "ab"}, "shapes": [{"kind": "circle", "radius": 1.5}, {"kind": "point"}]}),
        ),
        (
            "constrained",
            json!({"small": -5, "word": "abc", "list": [1]}),
        ),
        (
            "collections",
            json!({"counts": {"a": 1}, "tags": ["x"], "pair": [2, "b"]}),
        ),
        ("nothing", json!({})),
        ("plot", json!({"point": {"x": 1, "y": 2}})),
    ];
    for (name, args) in cases {
        let result = executor.invoke(name, args.clone(), &()).await;
        assert!(result.is_ok(), "{name} {args}: {result:?}");
    }
}

#[tokio::test]
async fn structs_written_as_arrays_are_refused_as_the_schema_says() {
    // serde would build these structs from arrays of their fields; the
    // advertised schema says objects, so the executor says no.
    let _serial = SERIAL.lock().await;
    let executor = Executor::new(Catalog::discover().unwrap(), Container::default()).unwrap();
    for (name, args) in [
        ("nothing", json!([])),
        ("plot", json!([{"x": 1, "y": 2}])),
        ("plot", json!({"point": [1, 2]})),
    ] {
        let before = BODIES.load(Ordering::SeqCst);
        let result = executor.invoke(name, args.clone(), &()).await;
        assert!(
            matches!(result, Err(CallError::InvalidArguments { .. })),
            "{name} {args}: {result:?}"
        );
        assert_eq!(BODIES.load(Ordering::SeqCst), before);
    }
}

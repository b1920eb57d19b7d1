//! Advertised equals enforced: for any argument object, a standard JSON
//! Schema validator reading the advertised schema and the executor agree,
//! and accepted arguments reach the body with the meaning they were sent with.

use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolwright::{CallError, Catalog, Container, Executor, tool};

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Medium,
    Large,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
struct Address {
    #[schemars(length(min = 1, max = 12))]
    city: String,
    #[schemars(regex(pattern = r"^[0-9]{5}$"))]
    zip: String,
}

/// Everything the order tool received.
#[derive(Serialize, Debug)]
struct Received {
    quantity: u32,
    sku: String,
    note: Option<String>,
    size: Size,
    address: Address,
    priority: u8,
    tags: Vec<String>,
}

static BODY_RUNS: AtomicUsize = AtomicUsize::new(0);
static REJECTED: AtomicUsize = AtomicUsize::new(0);

/// Order a product.
#[tool(key = "orders.check", effect = read, authorize = public)]
async fn check_order(
    #[schemars(range(min = 1, max = 100))] quantity: u32,
    #[schemars(regex(pattern = r"^[A-Z]{2}-[0-9]{1,4}$"))] sku: String,
    #[schemars(length(max = 8))] note: Option<String>,
    size: Size,
    address: Address,
    #[schemars(range(min = 1, max = 5))]
    #[default = 1]
    priority: u8,
    #[schemars(length(max = 3))] tags: Vec<String>,
) -> Received {
    BODY_RUNS.fetch_add(1, Ordering::SeqCst);
    Received {
        quantity,
        sku,
        note,
        size,
        address,
        priority,
        tags,
    }
}

static PLAIN_RUNS: AtomicUsize = AtomicUsize::new(0);

/// A tool whose schema says nothing its types do not: the executor may
/// trust deserialization alone, and must still agree with the schema.
#[tool(key = "orders.plain", effect = read, authorize = public)]
async fn plain_order(
    quantity: u32,
    small: u8,
    size: Size,
    note: Option<String>,
    tags: Vec<String>,
) -> Value {
    PLAIN_RUNS.fetch_add(1, Ordering::SeqCst);
    json!({"quantity": quantity, "small": small, "size": size, "note": note, "tags": tags})
}

fn plain_arguments() -> impl Strategy<Value = Value> {
    (
        field(integers_within(0, 5_000), numbers()),
        field(
            integers_within(0, 255),
            prop_oneof![Just(json!(256)), Just(json!(-1)), numbers()],
        ),
        field(
            prop_oneof![Just(json!("small")), Just(json!("large"))],
            Just(json!("huge")),
        ),
        field(
            prop_oneof!["[a-z]{0,8}".prop_map(Value::from), Just(Value::Null)],
            Just(json!(3)),
        ),
        field(
            proptest::collection::vec("[a-z]{0,5}".prop_map(Value::from), 0..4)
                .prop_map(Value::from),
            proptest::collection::vec(anything(), 1..3).prop_map(Value::from),
        ),
    )
        .prop_map(|(quantity, small, size, note, tags)| {
            let mut map = Map::new();
            for (name, value) in [
                ("quantity", quantity),
                ("small", small),
                ("size", size),
                ("note", note),
                ("tags", tags),
            ] {
                if let Some(value) = value {
                    map.insert(name.into(), value);
                }
            }
            Value::Object(map)
        })
}

fn numbers() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..120).prop_map(Value::from),
        (0u32..10).prop_map(|n| json!(f64::from(n))),
        (0u32..10).prop_map(|n| json!(f64::from(n) + 0.5)),
        Just(json!(1e20)),
        Just(json!(u64::MAX)),
        Just(json!(-1)),
    ]
}

fn strings() -> impl Strategy<Value = Value> {
    prop_oneof![
        "[A-Z]{2}-[0-9]{1,4}".prop_map(Value::from),
        "[a-zA-Z0-9 -]{0,14}".prop_map(Value::from),
        "[0-9]{4,6}".prop_map(Value::from),
        Just(json!("")),
    ]
}

fn anything() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        numbers(),
        strings(),
        Just(json!([])),
        Just(json!({})),
    ]
}

/// Mostly a valid value, sometimes a near miss, sometimes anything, sometimes absent.
fn field(
    valid: impl Strategy<Value = Value> + 'static,
    near_miss: impl Strategy<Value = Value> + 'static,
) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        16 => valid.prop_map(Some),
        2 => near_miss.prop_map(Some),
        1 => anything().prop_map(Some),
        1 => Just(None),
    ]
}

fn integers_within(min: u32, max: u32) -> impl Strategy<Value = Value> {
    prop_oneof![
        (min..=max).prop_map(Value::from),
        (min..=max).prop_map(|n| json!(f64::from(n))),
    ]
}

fn address() -> impl Strategy<Value = Value> {
    (
        field("[a-z]{1,12}".prop_map(Value::from), strings()),
        field("[0-9]{5}".prop_map(Value::from), strings()),
        proptest::bool::weighted(0.05),
    )
        .prop_map(|(city, zip, extra)| {
            let mut map = Map::new();
            if let Some(city) = city {
                map.insert("city".into(), city);
            }
            if let Some(zip) = zip {
                map.insert("zip".into(), zip);
            }
            if extra {
                map.insert("country".into(), json!("FR"));
            }
            Value::Object(map)
        })
}

fn arguments() -> impl Strategy<Value = Value> {
    (
        field(integers_within(1, 100), numbers()),
        field("[A-Z]{2}-[0-9]{1,4}".prop_map(Value::from), strings()),
        field(
            prop_oneof!["[a-z ]{0,8}".prop_map(Value::from), Just(Value::Null)],
            "[a-z]{9,12}".prop_map(Value::from),
        ),
        field(
            prop_oneof![
                Just(json!("small")),
                Just(json!("medium")),
                Just(json!("large"))
            ],
            prop_oneof![Just(json!("huge")), Just(json!("Small"))],
        ),
        field(address(), Just(json!("Paris"))),
        field(integers_within(1, 5), numbers()),
        field(
            proptest::collection::vec("[a-z]{0,5}".prop_map(Value::from), 0..=3)
                .prop_map(Value::from),
            proptest::collection::vec(anything(), 0..6).prop_map(Value::from),
        ),
        proptest::bool::weighted(0.03),
    )
        .prop_map(
            |(quantity, sku, note, size, address, priority, tags, extra)| {
                let mut map = Map::new();
                for (name, value) in [
                    ("quantity", quantity),
                    ("sku", sku),
                    ("note", note),
                    ("size", size),
                    ("address", address),
                    ("priority", priority),
                    ("tags", tags),
                ] {
                    if let Some(value) = value {
                        map.insert(name.into(), value);
                    }
                }
                if extra {
                    map.insert("internal_flag".into(), json!(true));
                }
                Value::Object(map)
            },
        )
}

/// Numbers compare by value (`3.0` sent, `3` received).
fn same_meaning(sent: &Value, received: &Value) -> bool {
    match (sent, received) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same_meaning(x, y))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| same_meaning(v, w)))
        }
        _ => sent == received,
    }
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    executor: Executor,
    validator: jsonschema::Validator,
    plain_validator: jsonschema::Validator,
}

fn fixture() -> Fixture {
    let catalog = Catalog::discover().unwrap();
    // A client's view: the advertised schema, compiled by a standard validator.
    let advertised = catalog.get("check_order").unwrap().input_schema().clone();
    let plain = catalog.get("plain_order").unwrap().input_schema().clone();
    Fixture {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        executor: Executor::new(catalog, Container::default()).unwrap(),
        validator: jsonschema::validator_for(&advertised).unwrap(),
        plain_validator: jsonschema::validator_for(&plain).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn schema_and_executor_agree_on_every_input(args in arguments()) {
        thread_local!(static FIXTURE: Fixture = fixture());
        FIXTURE.with(|f| {
            let accepted_by_schema = f.validator.is_valid(&args);
            let runs_before = BODY_RUNS.load(Ordering::SeqCst);
            let result = f.runtime.block_on(f.executor.invoke("check_order", args.clone(), &()));
            let ran = BODY_RUNS.load(Ordering::SeqCst) - runs_before;
            match result {
                Ok(received) => {
                    prop_assert!(accepted_by_schema, "executor accepted what the schema rejects: {args}");
                    prop_assert_eq!(ran, 1);
                    let sent = args.as_object().unwrap();
                    for (name, value) in sent {
                        prop_assert!(same_meaning(value, &received[name]), "{name}: sent {value}, received {}", received[name]);
                    }
                    if !sent.contains_key("priority") {
                        prop_assert_eq!(&received["priority"], &json!(1));
                    }
                    if !sent.contains_key("note") {
                        prop_assert_eq!(&received["note"], &Value::Null);
                    }
                }
                Err(CallError::InvalidArguments { violations, .. }) => {
                    prop_assert!(!accepted_by_schema, "executor rejected what the schema accepts: {args}: {violations}");
                    prop_assert_eq!(ran, 0, "a body never runs on invalid input");
                    prop_assert!(!violations.0.is_empty());
                    REJECTED.fetch_add(1, Ordering::SeqCst);
                }
                Err(other) => prop_assert!(false, "unexpected error {other:?} for {args}"),
            }
            Ok(())
        })?;
    }

    #[test]
    fn schema_and_executor_agree_when_types_say_everything(args in plain_arguments()) {
        thread_local!(static FIXTURE: Fixture = fixture());
        FIXTURE.with(|f| {
            let accepted_by_schema = f.plain_validator.is_valid(&args);
            let runs_before = PLAIN_RUNS.load(Ordering::SeqCst);
            let result = f.runtime.block_on(f.executor.invoke("plain_order", args.clone(), &()));
            let ran = PLAIN_RUNS.load(Ordering::SeqCst) - runs_before;
            match result {
                Ok(received) => {
                    prop_assert!(accepted_by_schema, "executor accepted what the schema rejects: {args}");
                    prop_assert_eq!(ran, 1);
                    for (name, value) in args.as_object().unwrap() {
                        prop_assert!(same_meaning(value, &received[name]), "{name}: sent {value}, received {}", received[name]);
                    }
                }
                Err(CallError::InvalidArguments { .. }) => {
                    prop_assert!(!accepted_by_schema, "executor rejected what the schema accepts: {args}");
                    prop_assert_eq!(ran, 0);
                }
                Err(other) => prop_assert!(false, "unexpected error {other:?} for {args}"),
            }
            Ok(())
        })?;
    }
}

#[test]
fn the_generator_exercises_both_sides() {
    // Guards the property above against a generator that only ever produces
    // one kind of input.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let f = fixture();
    let (mut valid, mut invalid) = (0, 0);
    for _ in 0..500 {
        let args = arguments().new_tree(&mut runner).unwrap().current();
        if f.validator.is_valid(&args) {
            valid += 1;
        } else {
            invalid += 1;
        }
    }
    assert!(
        valid >= 50 && invalid >= 50,
        "valid {valid}, invalid {invalid}"
    );
}

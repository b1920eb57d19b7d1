//! Arbitrary JSON (depth ≤ 6) sent to every tool of a representative
//! catalog (`hostile/mod.rs`, shared with the fuzz target): the executor
//! answers with a result, `InvalidArguments`, or its hooks' refusal, never
//! panics, never runs a body on arguments its schema rejects or its hooks
//! did not let through, and never refuses arguments its schema accepts.

mod hostile;

use std::sync::LazyLock;

use proptest::prelude::*;
use serde_json::{Value, json};
use toolwright::{CallError, Catalog};

use hostile::Fixture;

// Tests that count what ran take turns: the counters are shared.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Every field name in the catalog's schemas, nested ones too.
static FIELD_NAMES: LazyLock<Vec<String>> = LazyLock::new(|| {
    fn walk(schema: &Value, names: &mut Vec<String>) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(fields)) = map.get("properties") {
                    names.extend(fields.keys().cloned());
                }
                map.values().for_each(|v| walk(v, names));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, names)),
            _ => {}
        }
    }
    let mut names = Vec::new();
    for tool in Catalog::discover().unwrap().iter() {
        walk(tool.input_schema(), &mut names);
    }
    names.sort();
    names.dedup();
    names
});

/// Arbitrary JSON, its object keys mostly the catalog's field names.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        (-300i32..300).prop_map(|e| Value::from(10f64.powi(e))),
        "[a-z]{0,6}".prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
        prop_oneof![
            Just("circle"),
            Just("square"),
            Just("point"),
            Just("small"),
            Just("large"),
            Just("12345"),
            Just("kind")
        ]
        .prop_map(Value::from),
    ];
    let keys = proptest::sample::select(FIELD_NAMES.clone());
    let keys = prop_oneof![4 => keys, 1 => "[a-z]{1,4}"];
    leaf.prop_recursive(6, 64, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            proptest::collection::btree_map(keys.clone(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A tool's name and arguments drawn from its own advertised schema, now
/// and then with an arbitrary value in place of a part: arguments that get
/// past the first checks far more often than arbitrary JSON does, to the
/// hooks, the approval and the body, with values at and beyond every bound.
fn near_valid() -> impl Strategy<Value = (String, Value)> {
    let catalog = Catalog::discover().unwrap();
    let tools: Vec<_> = catalog
        .iter()
        .map(|tool| {
            let (name, schema) = (tool.name().to_owned(), tool.input_schema());
            let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
            shaped(schema, &defs, 0).prop_map(move |args| (name.clone(), args))
        })
        .collect();
    proptest::strategy::Union::new(tools)
}

/// Values of the shape `schema` describes (`defs`: its root's `$defs`),
/// with their parts sometimes arbitrary.
fn shaped(schema: &Value, defs: &Value, depth: u32) -> BoxedStrategy<Value> {
    let exact = exactly_shaped(schema, defs, depth);
    if depth == 0 {
        return exact;
    }
    prop_oneof![9 => exact, 1 => json_value()].boxed()
}

fn exactly_shaped(schema: &Value, defs: &Value, depth: u32) -> BoxedStrategy<Value> {
    let any_of = |options: &Vec<Value>| {
        let options: Vec<_> = options.iter().map(|s| shaped(s, defs, depth)).collect();
        proptest::strategy::Union::new(options).boxed()
    };
    if let Some(name) = schema["$ref"]
        .as_str()
        .and_then(|r| r.strip_prefix("#/$defs/"))
    {
        return exactly_shaped(&defs[name], defs, depth);
    }
    if let Some(values) = schema["enum"].as_array() {
        return proptest::sample::select(values.clone()).boxed();
    }
    if let Some(value) = schema.get("const") {
        return Just(value.clone()).boxed();
    }
    if let Some(options) = schema["oneOf"].as_array().or(schema["anyOf"].as_array()) {
        return any_of(options);
    }
    if depth > 4 {
        return json_value().boxed();
    }
    if let Some(types) = schema["type"].as_array() {
        let each = types.iter().map(|ty| {
            let mut one = schema.clone();
            one["type"] = ty.clone();
            one
        });
        return any_of(&each.collect());
    }
    let bound = |key: &str| schema[key].as_u64().map(|n| n as usize);
    match schema["type"].as_str().unwrap_or("") {
        "object" => {
            let fields: Vec<_> = schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(field, field_schema)| {
                    let required = schema["required"]
                        .as_array()
                        .is_some_and(|r| r.contains(&Value::from(field.as_str())));
                    let value = shaped(field_schema, defs, depth + 1);
                    let chance = if required { 0.97 } else { 0.6 };
                    let field = field.clone();
                    proptest::option::weighted(chance, value).prop_map(move |v| (field.clone(), v))
                })
                .collect();
            let values = match schema.get("additionalProperties") {
                Some(Value::Bool(false)) | None => Just(Vec::new()).boxed(),
                Some(values) => {
                    proptest::collection::vec(("\\PC{0,4}", shaped(values, defs, depth + 1)), 0..4)
                        .boxed()
                }
            };
            (fields, values)
                .prop_map(|(fields, values)| {
                    let fields = fields
                        .into_iter()
                        .filter_map(|(field, value)| Some((field, value?)));
                    Value::Object(fields.chain(values).collect())
                })
                .boxed()
        }
        "array" => {
            let length = bound("minItems").unwrap_or(0)..=bound("maxItems").unwrap_or(4).min(5);
            if let Some(items) = schema["prefixItems"].as_array() {
                let items: Vec<_> = items.iter().map(|s| shaped(s, defs, depth + 1)).collect();
                return items.prop_map(Value::from).boxed();
            }
            proptest::collection::vec(shaped(&schema["items"], defs, depth + 1), length)
                .prop_map(Value::from)
                .boxed()
        }
        "string" => {
            let (low, high) = (
                bound("minLength").unwrap_or(0),
                bound("maxLength").unwrap_or(8),
            );
            let any = format!("(\\PC|[a-z0-9]){{{low},{}}}", high + 1);
            // proptest generates from a pattern without its anchors.
            let pattern = schema["pattern"]
                .as_str()
                .map(|p| p.trim_start_matches('^').trim_end_matches('$'));
            let strings = |pattern: &str| proptest::string::string_regex(pattern).ok();
            let matching = pattern.and_then(strings);
            let any = strings(&any).unwrap();
            match matching {
                Some(matching) => prop_oneof![3 => matching, 1 => any]
                    .prop_map(Value::from)
                    .boxed(),
                None => any.prop_map(Value::from).boxed(),
            }
        }
        "integer" => {
            // Unbounded: far beyond what any Rust integer holds.
            let number = |key: &str, unbounded: f64| schema[key].as_f64().unwrap_or(unbounded);
            let (low, high) = (number("minimum", -1e30), number("maximum", 1e30));
            // `high + 1.0` is `high` itself at u64::MAX; twice it is not.
            let edges = [
                low,
                high,
                low - 1.0,
                high + 1.0,
                2.0 * high + 1.0,
                2.0 * low - 1.0,
                0.0,
            ];
            let edges: Vec<Value> = edges.iter().map(|&edge| integral(edge)).collect();
            prop_oneof![
                2 => proptest::sample::select(edges),
                2 => (low..=high).prop_map(|n| integral(n.round())),
                1 => (low..=high).prop_map(|n| Value::from(n.round())),
                1 => any::<i64>().prop_map(Value::from),
            ]
            .boxed()
        }
        "number" => {
            let number = |key: &str| schema[key].as_f64();
            let edges: Vec<Value> = [number("minimum"), number("maximum")]
                .into_iter()
                .flatten()
                .flat_map(|edge| [edge, edge * (1.0 + 1e-7), edge * (1.0 - 1e-7)])
                .chain([0.0, -0.0, 1e-45, 1e-50, 3.4028236e38, 1e300, f64::MAX])
                .map(Value::from)
                .collect();
            prop_oneof![
                2 => proptest::sample::select(edges),
                1 => (-300i32..300, any::<bool>())
                    .prop_map(|(e, negative)| Value::from(if negative { -1.0 } else { 1.0 } * 10f64.powi(e))),
                1 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
            ]
            .boxed()
        }
        "boolean" => any::<bool>().prop_map(Value::from).boxed(),
        "null" => Just(Value::Null).boxed(),
        _ => json_value().boxed(),
    }
}

/// `n` as a JSON integer where one holds it, otherwise as a number.
fn integral(n: f64) -> Value {
    if n >= 0.0 && n <= u64::MAX as f64 && n.fract() == 0.0 {
        Value::from(n as u64)
    } else if n < 0.0 && n >= i64::MIN as f64 && n.fract() == 0.0 {
        Value::from(n as i64)
    } else {
        Value::from(n)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_500))]

    #[test]
    fn arguments_near_a_tools_own_keep_the_rules((name, args) in near_valid()) {
        thread_local!(static FIXTURE: Fixture = Fixture::new());
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        FIXTURE.with(|f| f.send(&name, &args)).map(drop).map_err(TestCaseError::fail)?;
    }

    #[test]
    fn arbitrary_json_never_panics_and_never_runs_a_body_it_should_not(args in json_value()) {
        thread_local!(static FIXTURE: Fixture = Fixture::new());
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        FIXTURE.with(|f| f.send_everywhere(&args)).map_err(TestCaseError::fail)?;
    }
}

#[test]
fn each_kind_of_call_answers_as_its_tool_says() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    // The fuzz target's seeds: a call each tool takes, one file per tool.
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/invoke");
    let mut seeded = std::collections::BTreeMap::new();
    for seed in std::fs::read_dir(seeds).unwrap() {
        let path = seed.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let args: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let answer = fixture.send(&name, &args).unwrap();
        assert!(answer.is_ok(), "{name} {args}: {answer:?}");
        seeded.insert(name, args);
    }
    let mut tools: Vec<_> = fixture.tools().collect();
    tools.sort();
    assert!(
        seeded.keys().eq(&tools),
        "a seed for each tool, named after it"
    );

    // A number wider than 64 bits arrives as an `f64`, which a `u128`
    // cannot read: its schema says so, rather than accept it and refuse.
    for big in [json!(1e30), json!(18446744073709551616.0)] {
        let mut wide = seeded["varied"].clone();
        wide["big"] = big;
        let answer = fixture.send("varied", &wide);
        assert!(
            matches!(answer, Ok(Err(CallError::InvalidArguments { .. }))),
            "{answer:?}"
        );
    }

    let refused = fixture.send("coded", &json!({"code": "a1", "count": 2}));
    assert!(
        matches!(&refused, Ok(Err(CallError::InvalidArguments { violations, .. })) if violations.0[0].path == "/code"),
        "{refused:?}"
    );
    let denied = fixture.send("guarded", &json!({"level": 3}));
    assert!(
        matches!(denied, Ok(Err(CallError::Denied { .. }))),
        "{denied:?}"
    );
    // The approver decides by the digest: of enough different calls, some
    // run, some wait for a person and some are refused.
    let (mut ran, mut waiting, mut refused) = (0, 0, 0);
    for retries in 0..30 {
        let args = json!({"ratio": 0.1, "weight": 1e300, "labels": {"a": -1}, "size": "small", "retries": retries});
        match fixture.send("approved", &args).unwrap() {
            Ok(_) => ran += 1,
            Err(CallError::ApprovalRequired(_)) => waiting += 1,
            Err(CallError::NotApproved { .. }) => refused += 1,
            other => panic!("{args}: {other:?}"),
        }
    }
    assert!(
        ran > 0 && waiting > 0 && refused > 0,
        "{ran} {waiting} {refused}"
    );
}

#[test]
fn structs_written_as_arrays_are_refused_as_the_schema_says() {
    // serde would build these structs from arrays of their fields; the
    // advertised schema says objects, so the executor says no.
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let fixture = Fixture::new();
    for args in [
        json!([]),
        json!([{"x": 1, "y": 2}]),
        json!({"point": [1, 2]}),
        json!({"address": ["Main", "12345", null], "shapes": []}),
    ] {
        fixture.send_everywhere(&args).unwrap();
    }
}

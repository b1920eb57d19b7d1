//! OpenAI strict mode changes the schema's meaning in one way (every field
//! required, optional ones nullable) and the executor maps it back: any
//! argument object the strict schema accepts is accepted by the executor,
//! through the OpenAI call path, with the meaning it was sent with.

use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolwright::providers::{self, Format};
use toolwright::{Catalog, Container, Executor, tool};

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Size {
    Small,
    Large,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema, Debug, Clone, PartialEq)]
struct Address {
    #[schemars(length(min = 1, max = 8))]
    street: String,
    floor: Option<i8>,
    #[schemars(range(min = 1, max = 9))]
    #[serde(default = "one")]
    door: u8,
}

fn one() -> u8 {
    1
}

/// Check an order.
#[tool(key = "strict.check", effect = read, authorize = public)]
async fn check(
    #[schemars(range(min = 1, max = 10))] count: u8,
    #[schemars(length(min = 1, max = 5))] label: String,
    note: Option<String>,
    #[schemars(range(min = 1, max = 5))]
    #[default = 3]
    level: u8,
    size: Option<Size>,
    address: Option<Address>,
    tags: Vec<String>,
) -> Value {
    json!({
        "count": count, "label": label, "note": note, "level": level,
        "size": size, "address": address, "tags": tags,
    })
}

fn maybe_null(valid: impl Strategy<Value = Value> + 'static) -> impl Strategy<Value = Value> {
    prop_oneof![3 => valid, 1 => Just(Value::Null)]
}

fn address() -> impl Strategy<Value = Value> {
    (
        prop_oneof![4 => "[a-z ]{1,8}".prop_map(Value::from), 1 => "[a-z]{9,10}".prop_map(Value::from)],
        maybe_null((-128i32..128).prop_map(Value::from)),
        maybe_null((0u32..11).prop_map(Value::from)),
    )
        .prop_map(|(street, floor, door)| json!({"street": street, "floor": floor, "door": door}))
}

fn arguments() -> impl Strategy<Value = Value> {
    (
        prop_oneof![5 => (1u32..=10).prop_map(Value::from), 1 => (0u32..20).prop_map(Value::from)],
        prop_oneof![5 => "[a-z]{1,5}".prop_map(Value::from), 1 => "[a-z]{0,8}".prop_map(Value::from)],
        maybe_null("[a-z ]{0,6}".prop_map(Value::from)),
        maybe_null(prop_oneof![4 => (1u32..=5).prop_map(Value::from), 1 => (0u32..8).prop_map(Value::from)]),
        maybe_null(prop_oneof![Just(json!("small")), Just(json!("large")), Just(json!("medium"))]),
        maybe_null(address()),
        proptest::collection::vec("[a-z]{0,3}".prop_map(Value::from), 0..3).prop_map(Value::from),
    )
        .prop_map(|(count, label, note, level, size, address, tags)| {
            let mut map = Map::new();
            for (k, v) in [
                ("count", count),
                ("label", label),
                ("note", note),
                ("level", level),
                ("size", size),
                ("address", address),
                ("tags", tags),
            ] {
                map.insert(k.into(), v);
            }
            Value::Object(map)
        })
}

/// `sent` as the body should have received it: `null` for an absent
/// `Option`, the default for an absent field with one.
fn expected(sent: &Value) -> Value {
    let mut expected = sent.clone();
    if expected["level"].is_null() {
        expected["level"] = json!(3);
    }
    if let Some(address) = expected.get_mut("address").filter(|a| a.is_object())
        && address["door"].is_null()
    {
        address["door"] = json!(1);
    }
    expected
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    executor: Executor,
    strict: jsonschema::Validator,
}

fn fixture() -> Fixture {
    let catalog = Catalog::builder().register::<CheckArgs>().build().unwrap();
    let strict = providers::schema_for(
        catalog.get("check").unwrap(),
        Format::OpenAiChat { strict: true },
    )
    .unwrap();
    Fixture {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        executor: Executor::new(catalog, Container::default()).unwrap(),
        strict: jsonschema::draft202012::new(&strict).unwrap(),
    }
}

fn as_strict_response(args: &Value) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "check", "arguments": args.to_string()}}
    ]}}]})
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    #[test]
    fn what_the_strict_schema_accepts_the_executor_accepts(args in arguments()) {
        thread_local!(static FIXTURE: Fixture = fixture());
        FIXTURE.with(|f| {
            if !f.strict.is_valid(&args) {
                return Ok(()); // strict mode may be narrower; never wider
            }
            let calls = providers::parse_calls(&as_strict_response(&args), Format::OpenAiChat { strict: true }).unwrap();
            let outcome = f.runtime.block_on(f.executor.run_calls(calls, &())).remove(0);
            match outcome.result {
                Ok(received) => prop_assert_eq!(received, expected(&args)),
                Err(error) => prop_assert!(false, "strict schema accepted {args} but the executor said {error}"),
            }
            Ok(())
        })?;
    }
}

#[test]
fn the_generator_reaches_both_sides_of_the_strict_schema() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let f = fixture();
    let accepted = (0..400)
        .filter(|_| {
            f.strict
                .is_valid(&arguments().new_tree(&mut runner).unwrap().current())
        })
        .count();
    assert!(
        (100..=380).contains(&accepted),
        "{accepted} of 400 accepted"
    );
}

//! The canonical input schema of a tool, and what it takes to enforce it.

use serde_json::{Map, Value};

/// What `schemars` derives for a type: its `JsonSchema::json_schema`.
pub(crate) type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// The canonical input schema of a tool whose argument struct's schema is
/// `json_schema`: JSON Schema draft 2020-12, without the root title and
/// description (the generated struct's, not the tool's), and with every
/// integer and `f32` bounded by its Rust type, so the schema accepts
/// exactly the numbers the deserializer reads as themselves.
pub(crate) fn input_schema(json_schema: SchemaFn) -> Value {
    let mut value = root_schema(json_schema, None);
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("description");
    }
    bound_numbers(&mut value);
    value
}

/// A root schema (draft 2020-12, with its `$defs`), as
/// `SchemaGenerator::into_root_schema_for` builds it, but through a function
/// pointer: generic code here would be compiled again for every tool.
/// `title` is the root's title when the schema has none.
pub(crate) fn root_schema(json_schema: SchemaFn, title: Option<String>) -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = json_schema(&mut generator);
    let definitions = generator.take_definitions(false);
    let map = schema.ensure_object();
    if let Some(title) = title {
        map.entry("title").or_insert(Value::String(title));
    }
    map.insert("$schema".to_owned(), Value::from(DRAFT_2020_12));
    if !definitions.is_empty() {
        map.insert("$defs".to_owned(), Value::Object(definitions));
    }
    schema.to_value()
}

/// The meta-schema URI of JSON Schema draft 2020-12.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// `f32::MAX` as it prints (`3.4028235e38`), a little above its binary
/// value: every JSON number up to it reads as a finite `f32`, and so does
/// the typed `f32::MAX`, which toolwright writes as it prints.
const F32_PRINTED_MAX: f64 = 3.4028235e38;

/// The JSON type a number format schemars writes belongs to, and the
/// format's bounds.
///
/// An `f32` is bounded because serde reads a larger number as infinity,
/// which JSON cannot carry: an approval would show it, and its digest
/// cover it, as `null`, which stands for either infinity.
fn format_bounds(format: &str) -> Option<(&'static str, Value, Value)> {
    let integer = |lowest: Value, highest: Value| ("integer", lowest, highest);
    Some(match format {
        "int8" => integer(i8::MIN.into(), i8::MAX.into()),
        "int16" => integer(i16::MIN.into(), i16::MAX.into()),
        "int32" => integer(i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => integer(i64::MIN.into(), i64::MAX.into()),
        "uint8" => integer(u8::MIN.into(), u8::MAX.into()),
        "uint16" => integer(u16::MIN.into(), u16::MAX.into()),
        "uint32" => integer(u32::MIN.into(), u32::MAX.into()),
        "uint64" | "uint" => integer(u64::MIN.into(), u64::MAX.into()),
        // The arguments are a `serde_json::Value`, which holds 64-bit
        // integers only: a wider number arrives as an `f64`, which a
        // `u128` or an `i128` refuses.
        "uint128" if !wide_integers() => integer(u64::MIN.into(), u64::MAX.into()),
        "int128" if !wide_integers() => integer(i64::MIN.into(), u64::MAX.into()),
        "float" => ("number", (-F32_PRINTED_MAX).into(), F32_PRINTED_MAX.into()),
        _ => return None,
    })
}

/// Whether a JSON integer wider than 64 bits reads as a `u128`: only when
/// some crate in the build turns on serde_json's `arbitrary_precision`,
/// so this asks serde_json (once).
fn wide_integers() -> bool {
    static WIDE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WIDE.get_or_init(|| {
        serde_json::from_str::<Value>("18446744073709551616")
            .and_then(<u128 as serde::Deserialize>::deserialize)
            .is_ok()
    })
}

/// Adds the type's own `minimum`/`maximum` where the schema has none.
///
/// One pass over each object's keywords (rather than a lookup per keyword,
/// each a walk down the map comparing strings): this runs over every
/// schema the first time it is asked for.
fn bound_numbers(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let (mut integer, mut number, mut format, mut min, mut max) =
                (false, false, None, false, false);
            for (keyword, value) in map.iter_mut() {
                // Keywords by name and shape: in `properties`, the same
                // names are fields, whose schemas are objects.
                match (keyword.as_str(), &*value) {
                    ("type", ty) => {
                        (integer, number) = (has_type(ty, "integer"), has_type(ty, "number"))
                    }
                    ("format", Value::String(f)) => format = format_bounds(f),
                    ("minimum", Value::Number(_)) => min = true,
                    ("maximum", Value::Number(_)) => max = true,
                    _ => {}
                }
                bound_below(value);
            }
            if let Some((of, lowest, highest)) = format
                && (if of == "integer" { integer } else { number })
            {
                if !min {
                    map.insert("minimum".to_owned(), lowest);
                }
                if !max {
                    map.insert("maximum".to_owned(), highest);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_below),
        _ => {}
    }
}

/// [`bound_numbers`] of a keyword's value or an array's item: most are
/// strings, numbers and booleans, which hold no schema to bound.
#[inline]
fn bound_below(value: &mut Value) {
    if matches!(value, Value::Object(_) | Value::Array(_)) {
        bound_numbers(value);
    }
}

/// Whether a `type` keyword's value is, or includes, `name`.
fn has_type(ty: &Value, name: &str) -> bool {
    match ty {
        Value::String(t) => t == name,
        Value::Array(types) => types.iter().any(|t| t == name),
        _ => false,
    }
}

/// Keywords that only restate what the deserializer of a schemars-described
/// type already checks (types, fields, required and unknown fields, enum
/// variants) or that describe without constraining.
const STRUCTURAL: &[&str] = &[
    "$schema",
    "$defs",
    "$ref",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "oneOf",
    "anyOf",
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "format",
    "minimum",
    "maximum",
];

/// What must check a tool's arguments beside deserializing them, from
/// least to most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Enforcement {
    /// Nothing: deserializing enforces everything the schema says.
    Deserializing,
    /// Nothing while every number in the arguments is within `f32`'s
    /// range (see [`within_f32`]): the schema's only other rule is an
    /// `f32`'s bound, which serde does not enforce (it reads a larger
    /// number as infinity).
    WithinF32,
    /// The validator.
    Validator,
}

/// Whether deserializing already enforces everything `schema` says, so the
/// executor may skip the validator when deserialization succeeds.
///
/// It does when every keyword is structural and every `minimum`/`maximum`
/// is exactly the bound of the integer's own format; or, with
/// [`Enforcement::WithinF32`], of an `f32`. Anything else (a length, a
/// pattern, a user range, `uniqueItems`, an unknown keyword) needs the
/// validator. So do nested structs: serde also builds a struct from a JSON
/// array of its fields, which the schema's `"type": "object"` refuses; only
/// the root is exempt, because the executor checks it is an object itself.
/// This is only an optimisation: [`Enforcement::Validator`] is always safe.
pub(crate) fn enforcement(schema: &Value) -> Enforcement {
    needs(schema, true)
}

/// Whether every number in `arguments` is within `f32`'s range (as it
/// prints), so that no `f32` bound of a schema can refuse them.
pub(crate) fn within_f32(arguments: &Value) -> bool {
    match arguments {
        Value::Number(n) => n.as_f64().is_some_and(|x| x.abs() <= F32_PRINTED_MAX),
        Value::Array(items) => items.iter().all(within_f32),
        Value::Object(fields) => fields.values().all(within_f32),
        _ => true,
    }
}

/// What `schema` needs beside deserializing: the most any of its keywords
/// needs. `root`: it is the schema of the arguments themselves.
fn needs(schema: &Value, root: bool) -> Enforcement {
    use Enforcement::{Deserializing, Validator, WithinF32};
    let map = match schema {
        Value::Bool(true) => return Deserializing,
        Value::Object(map) => map,
        _ => return Validator,
    };
    // A bound that is its format's own: deserializing enforces an
    // integer's, and an `f32`'s while no number is beyond it.
    let bounds = map
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_bounds)
        .filter(|(of, ..)| map.get("type").is_some_and(|ty| has_type(ty, of)));
    let own_bound = |own: Option<(&str, &Value)>, value: &Value| match own {
        Some(("integer", bound)) if bound == value => Deserializing,
        Some((_, bound)) if bound == value => WithinF32,
        _ => Validator,
    };
    let below = |schema: &Value| needs(schema, false);
    let only_root = |value: Enforcement| if root { value } else { Validator };
    let keywords = map.iter().map(|(keyword, value)| match keyword.as_str() {
        keyword if !STRUCTURAL.contains(&keyword) => Validator,
        "minimum" => own_bound(bounds.as_ref().map(|(of, lowest, _)| (*of, lowest)), value),
        "maximum" => own_bound(
            bounds.as_ref().map(|(of, _, highest)| (*of, highest)),
            value,
        ),
        // A struct's fields: only the root's.
        "properties" => only_root(
            value
                .as_object()
                .map_or(Validator, |m| most(m.values(), below)),
        ),
        "required" => only_root(Deserializing),
        // `false` closes a struct (root only); a schema types a map's values.
        "additionalProperties" => match value {
            Value::Bool(false) => only_root(Deserializing),
            other => below(other),
        },
        "$defs" => value
            .as_object()
            .map_or(Validator, |m| most(m.values(), below)),
        "items" => below(value),
        "prefixItems" | "oneOf" | "anyOf" => value
            .as_array()
            .map_or(Validator, |a| most(a.iter(), below)),
        _ => Deserializing,
    });
    most(keywords, |needed| needed)
}

/// The most that any of `items` needs (`Deserializing` for none).
fn most<T>(items: impl Iterator<Item = T>, need: impl Fn(T) -> Enforcement) -> Enforcement {
    items.map(need).max().unwrap_or(Enforcement::Deserializing)
}

/// Whether `schema` certainly compiles, so the executor may put off
/// compiling its validator until a call needs it: every keyword is one
/// this knows, its value has the shape the draft 2020-12 meta-schema asks
/// for, `$schema` and `$defs` appear only at the root (where schemars
/// writes them), and every `$ref` names one of the root's `$defs`. That is
/// what `jsonschema` checks before it compiles these keywords; a keyword
/// whose value it must compile further (`pattern`, a regular expression)
/// makes this false. A test generates schemas to show that every schema
/// this accepts compiles. Only an optimisation: a `false` is always safe.
pub(crate) fn compiles(schema: &Value) -> bool {
    let defs = schema.get("$defs").and_then(Value::as_object);
    well_formed(schema, true, defs)
}

fn well_formed(schema: &Value, root: bool, defs: Option<&Map<String, Value>>) -> bool {
    let map = match schema {
        Value::Bool(_) => return true,
        Value::Object(map) => map,
        _ => return false,
    };
    let subschema = |value: &Value| well_formed(value, false, defs);
    let subschemas_in =
        |value: &Value| value.as_object().is_some_and(|m| m.values().all(subschema));
    // `schemaArray` in the meta-schema: at least one schema.
    let subschemas = |value: &Value| {
        value
            .as_array()
            .is_some_and(|all| !all.is_empty() && all.iter().all(subschema))
    };
    map.iter().all(|(keyword, value)| match keyword.as_str() {
        "$schema" => root && value == DRAFT_2020_12,
        "$defs" => root && subschemas_in(value),
        "$ref" => value.as_str().is_some_and(|to| names_a_def(to, defs)),
        "type" => is_type(value),
        "properties" => subschemas_in(value),
        "required" => unique_strings(value),
        "additionalProperties" | "items" | "not" => subschema(value),
        "prefixItems" | "allOf" | "anyOf" | "oneOf" => subschemas(value),
        "enum" | "examples" => value.is_array(),
        "const" | "default" => true,
        "title" | "description" | "format" => value.is_string(),
        "deprecated" | "readOnly" | "writeOnly" | "uniqueItems" => value.is_boolean(),
        "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => value.is_number(),
        "multipleOf" => value.as_f64().is_some_and(|step| step > 0.0),
        // `nonNegativeInteger`, written as one.
        "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties" | "maxProperties" => {
            value.is_u64()
        }
        _ => false,
    })
}

/// Whether `to` is `#/$defs/{name}` for one of `defs`, with a name that
/// needs no escaping in a JSON pointer or a URI.
fn names_a_def(to: &str, defs: Option<&Map<String, Value>>) -> bool {
    to.strip_prefix("#/$defs/").is_some_and(|name| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
            && defs.is_some_and(|defs| defs.contains_key(name))
    })
}

/// The JSON Schema type names.
const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// A `type` keyword's value: a type name, or distinct type names.
fn is_type(value: &Value) -> bool {
    let named = |v: &Value| v.as_str().is_some_and(|t| TYPES.contains(&t));
    match value {
        Value::Array(types) => {
            !types.is_empty() && types.iter().all(named) && unique_strings(value)
        }
        other => named(other),
    }
}

/// An array of distinct strings (`stringArray` in the meta-schema).
fn unique_strings(value: &Value) -> bool {
    value.as_array().is_some_and(|all| {
        all.iter()
            .enumerate()
            .all(|(i, item)| item.is_string() && !all[..i].contains(item))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn plain_types_need_no_validator() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "int64", "minimum": i64::MIN, "maximum": i64::MAX},
                "b": {"type": ["string", "null"]},
                "c": {"$ref": "#/$defs/Size"},
                "d": {"type": "array", "items": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}},
                "e": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "required": ["a"],
            "additionalProperties": false,
            "$defs": {"Size": {"type": "string", "enum": ["s", "m"]}}
        });
        assert_eq!(enforcement(&schema), Enforcement::Deserializing);
    }

    #[test]
    fn constraints_need_the_validator() {
        for constrained in [
            json!({"type": "integer", "format": "uint8", "minimum": 1, "maximum": 255}),
            json!({"type": "string", "maxLength": 3}),
            json!({"type": "string", "pattern": "^a$"}),
            json!({"type": "array", "uniqueItems": true}),
            json!({"type": "number", "minimum": 0}),
            json!({"type": "object", "properties": {"x": {"type": "string", "minLength": 1}}}),
            // serde builds nested structs from arrays too; the schema does not.
            json!({"type": "object", "properties": {"x": {"type": "object", "properties": {}}}}),
            json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}},
                   "$defs": {"X": {"type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]}}}),
            json!(false),
        ] {
            assert_eq!(
                enforcement(&constrained),
                Enforcement::Validator,
                "{constrained}"
            );
        }
    }

    #[test]
    fn only_well_formed_schemas_are_compiled_late() {
        let with = |extra: Value| {
            let mut schema = json!({"type": "object", "properties": {}, "$defs": {"A": true}});
            schema
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            schema
        };
        for well_formed in [
            json!({}),
            json!({"properties": {"a": {"$ref": "#/$defs/A"}, "b": {"type": "object",
                   "properties": {"c": {"type": "string", "minLength": 1, "maxLength": 9}}}}}),
            json!({"properties": {"n": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}}}),
            json!({"properties": {"l": {"type": "array", "minItems": 1, "uniqueItems": true}}}),
        ] {
            let schema = with(well_formed);
            assert!(compiles(&schema), "{schema}");
        }
        for malformed in [
            json!({"type": "strng"}),
            json!({"type": []}),
            json!({"type": ["string", "string"]}),
            json!({"required": ["a", "a"]}),
            json!({"required": "a"}),
            json!({"properties": {"a": {"$ref": "#/$defs/B"}}}),
            json!({"properties": {"a": {"$ref": "#/definitions/A"}}}),
            json!({"properties": {"a": {"anyOf": []}}}),
            json!({"properties": {"a": {"enum": "a"}}}),
            json!({"properties": {"a": {"minLength": -1}}}),
            json!({"properties": {"a": {"minLength": 1.5}}}),
            json!({"properties": {"a": {"multipleOf": 0}}}),
            json!({"properties": {"a": {"pattern": "^a$"}}}),
            json!({"properties": {"a": {"unknownKeyword": 1}}}),
            json!({"title": 1}),
            json!({"$schema": "http://json-schema.org/draft-07/schema#"}),
        ] {
            let schema = with(malformed);
            assert!(!compiles(&schema), "{schema}");
        }
    }

    /// Words a schema uses, and some it must not.
    const WORDS: &[&str] = &[
        "integer",
        "string",
        "object",
        "array",
        "null",
        "boolean",
        "number",
        "strng",
        "int64",
        "uint8",
        "#/$defs/A",
        "#/$defs/B",
        "#/$defs/a b",
        "#/definitions/A",
        DRAFT_2020_12,
    ];

    /// Keywords whose value is not a schema, and two this crate does not
    /// compile late (`pattern`, `dependentRequired`).
    const VALUED: &[&str] = &[
        "enum",
        "examples",
        "const",
        "default",
        "title",
        "description",
        "format",
        "deprecated",
        "readOnly",
        "writeOnly",
        "minimum",
        "maximum",
        "$schema",
        "pattern",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "required",
        "dependentRequired",
    ];

    /// Numbers for the keywords that want a number, a count or a step,
    /// and values close to those.
    fn numbers() -> Vec<Value> {
        let numbers = json!([-1, 0, 1, 2, 0.5, 1.0, -0.5, "1", true, null]);
        numbers.as_array().unwrap().clone()
    }

    /// A value of any shape, small.
    fn any_value() -> impl Strategy<Value = Value> + Clone {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-2i64..300).prop_map(Value::from),
            Just(json!(0.5)),
            prop::sample::select(WORDS).prop_map(Value::from),
        ];
        leaf.prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::btree_map(prop::sample::select(WORDS), inner, 0..3).prop_map(
                    |map| Value::Object(map.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
                ),
            ]
        })
    }

    /// Schemas whose keywords are mostly the structural ones, with values
    /// mostly of the right shape: each keyword gets a value of the shape
    /// it wants, or of another.
    fn schema() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            any::<bool>().prop_map(Value::from),
            prop::sample::select(WORDS).prop_map(|ty| json!({"type": ty})),
            Just(json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255})),
            Just(json!({"type": "integer", "format": "uint8", "minimum": 1})),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            let names = || prop::sample::select(&["a", "b", "c"][..]);
            let word = || prop::sample::select(WORDS).prop_map(Value::from);
            let keyword = prop_oneof![
                word().prop_map(|w| ("type", w)),
                prop::collection::vec(word(), 0..3).prop_map(|all| ("type", Value::Array(all))),
                word().prop_map(|w| ("$ref", w)),
                prop::collection::btree_map(names(), inner.clone(), 0..3).prop_map(|fields| {
                    let fields = fields.into_iter().map(|(k, v)| (k.to_owned(), v));
                    ("properties", Value::Object(fields.collect()))
                }),
                prop::collection::vec(names(), 0..3).prop_map(|all| ("required", json!(all))),
                (
                    prop::sample::select(&["additionalProperties", "items", "not", "$defs"][..]),
                    inner.clone()
                ),
                (
                    prop::sample::select(&["prefixItems", "allOf", "oneOf", "anyOf"][..]),
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                ),
                (prop::sample::select(VALUED), any_value()),
                (
                    prop::sample::select(VALUED),
                    prop::sample::select(numbers())
                ),
            ];
            prop::collection::vec(keyword, 0..4).prop_map(|keywords| {
                Value::Object(
                    keywords
                        .into_iter()
                        .map(|(k, v)| (k.to_owned(), v))
                        .collect(),
                )
            })
        })
    }

    #[test]
    fn every_schema_compiled_late_compiles() {
        use proptest::test_runner::{Config, TestRunner};
        let root = (schema(), schema(), prop::option::of(schema())).prop_map(|(mut root, a, b)| {
            if let Value::Object(map) = &mut root {
                let mut defs = Map::from_iter([("A".to_owned(), a)]);
                defs.extend(b.map(|b| ("B".to_owned(), b)));
                map.insert("$defs".to_owned(), Value::Object(defs));
            }
            root
        });
        let mut runner = TestRunner::new(Config {
            cases: 4_000,
            failure_persistence: None,
            ..Config::default()
        });
        let accepted = std::cell::Cell::new(0);
        runner
            .run(&root, |schema| {
                if compiles(&schema) {
                    accepted.set(accepted.get() + 1);
                    let compiled = jsonschema::draft202012::new(&schema);
                    prop_assert!(compiled.is_ok(), "{schema}: {:?}", compiled.err());
                }
                Ok(())
            })
            .unwrap();
        // Enough accepted schemas for the property to say something.
        let accepted = accepted.get();
        assert!(accepted >= 200, "only {accepted} schemas accepted");
    }

    #[test]
    fn fields_named_like_keywords_are_bounded_too() {
        let mut schema = json!({"type": "object", "properties": {
            "type": {"type": "integer", "format": "uint8"},
            "format": {"type": "integer", "format": "int8"},
            "minimum": {"type": "integer", "format": "uint16"},
            "maximum": {"type": "integer", "format": "int16", "maximum": 7}
        }});
        bound_numbers(&mut schema);
        let field = |name: &str| schema["properties"][name].clone();
        assert_eq!(field("type")["maximum"], json!(u8::MAX));
        assert_eq!(field("format")["minimum"], json!(i8::MIN));
        assert_eq!(field("minimum")["maximum"], json!(u16::MAX));
        assert_eq!(field("maximum")["minimum"], json!(i16::MIN));
        assert_eq!(field("maximum")["maximum"], json!(7));
        assert!(schema["properties"].get("minimum").is_some());
        assert!(
            schema.get("minimum").is_none(),
            "the object itself is no integer"
        );
    }

    #[test]
    fn an_f32_is_bounded_to_the_numbers_that_read_as_finite() {
        let mut schema = json!({"properties": {
            "x": {"type": "number", "format": "float"},
            "y": {"type": ["number", "null"], "format": "float", "minimum": 0.5},
            "z": {"type": "number", "format": "double"}
        }});
        bound_numbers(&mut schema);
        let x = &schema["properties"]["x"];
        let highest = x["maximum"].as_f64().unwrap();
        assert_eq!(x["minimum"].as_f64(), Some(-highest));
        // Every number up to the bound reads as a finite f32, and the typed
        // f32::MAX, written as it prints, is within it.
        assert!((highest as f32).is_finite() && (-highest as f32).is_finite());
        assert_eq!(
            crate::util::json::to_value(&f32::MAX).unwrap(),
            x["maximum"]
        );
        assert_eq!(schema["properties"]["y"]["minimum"], json!(0.5));
        assert_eq!(schema["properties"]["y"]["maximum"], x["maximum"]);
        assert!(
            schema["properties"]["z"].get("maximum").is_none(),
            "an f64 reads every JSON number"
        );
        // serde reads a larger number as infinity: deserializing enforces
        // the bound only while no number in the arguments is that large.
        let fields = json!({"type": "object", "properties": {"x": x}});
        assert_eq!(enforcement(&fields), Enforcement::WithinF32);
        let mut ranged = fields.clone();
        ranged["properties"]["x"]["maximum"] = json!(1.0);
        assert_eq!(enforcement(&ranged), Enforcement::Validator);
        let within = json!({"x": 3.4028235e38, "y": [-3.4028235e38, 1, u64::MAX], "z": {"w": 0.5}});
        assert!(within_f32(&within));
        for beyond in [
            json!({"x": 3.4028236e38}),
            json!({"y": [1, -1e39]}),
            json!({"z": {"w": 1e300}}),
        ] {
            assert!(!within_f32(&beyond), "{beyond}");
        }
    }

    #[test]
    fn a_128_bit_integer_gets_the_range_its_json_arrives_in() {
        let mut schema = json!({"properties": {
            "u": {"type": "integer", "format": "uint128", "minimum": 0},
            "i": {"type": "integer", "format": "int128"}
        }});
        bound_numbers(&mut schema);
        let (u, i) = (&schema["properties"]["u"], &schema["properties"]["i"]);
        assert!(!wide_integers(), "this build has 64-bit JSON integers");
        assert_eq!(
            (&u["minimum"], &u["maximum"]),
            (&json!(0), &json!(u64::MAX))
        );
        assert_eq!(
            (&i["minimum"], &i["maximum"]),
            (&json!(i64::MIN), &json!(u64::MAX))
        );
        // What deserializing reads, exactly: no validator needed.
        let fields = json!({"type": "object", "properties": {"u": u, "i": i}});
        assert_eq!(enforcement(&fields), Enforcement::Deserializing);
    }

    #[test]
    fn integers_get_their_type_bounds() {
        let mut schema = json!({"properties": {
            "n": {"type": "integer", "format": "uint32", "minimum": 0},
            "m": {"type": ["integer", "null"], "format": "int32", "maximum": 10}
        }});
        bound_numbers(&mut schema);
        assert_eq!(schema["properties"]["n"]["maximum"], json!(u32::MAX));
        assert_eq!(schema["properties"]["m"]["minimum"], json!(i32::MIN));
        assert_eq!(schema["properties"]["m"]["maximum"], json!(10));
    }
}

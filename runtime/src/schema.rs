//! The canonical input schema of a tool, and what it takes to enforce it.

use serde_json::{Map, Value};

/// What `schemars` derives for a type: its `JsonSchema::json_schema`.
pub(crate) type SchemaFn = fn(&mut schemars::SchemaGenerator) -> schemars::Schema;

/// The canonical input schema of a tool whose argument struct's schema is
/// `json_schema`: JSON Schema draft 2020-12, without the root title and
/// description (the generated struct's, not the tool's), and with every
/// integer bounded by its Rust type, so the schema accepts exactly the
/// numbers the deserializer accepts.
pub(crate) fn input_schema(json_schema: SchemaFn) -> Value {
    let mut value = root_schema(json_schema, None);
    if let Value::Object(map) = &mut value {
        map.remove("title");
        map.remove("description");
    }
    bound_integers(&mut value);
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

/// The bounds of the integer formats schemars writes.
fn format_bounds(format: &str) -> Option<(Value, Value)> {
    Some(match format {
        "int8" => (i8::MIN.into(), i8::MAX.into()),
        "int16" => (i16::MIN.into(), i16::MAX.into()),
        "int32" => (i32::MIN.into(), i32::MAX.into()),
        "int64" | "int" => (i64::MIN.into(), i64::MAX.into()),
        "uint8" => (u8::MIN.into(), u8::MAX.into()),
        "uint16" => (u16::MIN.into(), u16::MAX.into()),
        "uint32" => (u32::MIN.into(), u32::MAX.into()),
        "uint64" | "uint" => (u64::MIN.into(), u64::MAX.into()),
        _ => return None,
    })
}

fn is_integer_type(schema: &Map<String, Value>) -> bool {
    schema.get("type").is_some_and(is_integer)
}

/// Adds the type's own `minimum`/`maximum` where the schema has none.
///
/// One pass over each object's keywords (rather than a lookup per keyword,
/// each a walk down the map comparing strings): this runs over every
/// schema the first time it is asked for.
fn bound_integers(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let (mut integer, mut format, mut min, mut max) = (false, None, false, false);
            for (keyword, value) in map.iter_mut() {
                // Keywords by name and shape: in `properties`, the same
                // names are fields, whose schemas are objects.
                match (keyword.as_str(), &*value) {
                    ("type", ty) => integer = is_integer(ty),
                    ("format", Value::String(f)) => format = format_bounds(f),
                    ("minimum", Value::Number(_)) => min = true,
                    ("maximum", Value::Number(_)) => max = true,
                    _ => {}
                }
                bound_integers(value);
            }
            if integer && let Some((lowest, highest)) = format {
                if !min {
                    map.insert("minimum".to_owned(), lowest);
                }
                if !max {
                    map.insert("maximum".to_owned(), highest);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_integers),
        _ => {}
    }
}

/// Whether a `type` keyword's value is, or includes, `integer`.
fn is_integer(ty: &Value) -> bool {
    match ty {
        Value::String(t) => t == "integer",
        Value::Array(types) => types.iter().any(|t| t == "integer"),
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

/// Whether deserializing already enforces everything `schema` says, so the
/// executor may skip the validator when deserialization succeeds.
///
/// True when every keyword is structural and every `minimum`/`maximum` is
/// exactly the bound of the integer's own format. Anything else (a length,
/// a pattern, a user range, `uniqueItems`, an unknown keyword) needs the
/// validator. So do nested structs: serde also builds a struct from a JSON
/// array of its fields, which the schema's `"type": "object"` refuses; only
/// the root is exempt, because the executor checks it is an object itself.
/// This is only an optimisation: a `false` is always safe.
pub(crate) fn deserialization_enforces(schema: &Value) -> bool {
    enforced(schema, true)
}

fn enforced(schema: &Value, root: bool) -> bool {
    let map = match schema {
        Value::Bool(accepts_anything) => return *accepts_anything,
        Value::Object(map) => map,
        _ => return false,
    };
    let bounds = map
        .get("format")
        .and_then(Value::as_str)
        .and_then(format_bounds)
        .filter(|_| is_integer_type(map));
    map.iter().all(|(keyword, value)| {
        STRUCTURAL.contains(&keyword.as_str())
            && match keyword.as_str() {
                "minimum" => bounds.as_ref().is_some_and(|(min, _)| min == value),
                "maximum" => bounds.as_ref().is_some_and(|(_, max)| max == value),
                // A struct's fields: only the root's.
                "properties" => {
                    root && value
                        .as_object()
                        .is_some_and(|m| m.values().all(|v| enforced(v, false)))
                }
                "required" => root,
                // `false` closes a struct (root only); a schema types a map's values.
                "additionalProperties" => match value {
                    Value::Bool(false) => root,
                    other => enforced(other, false),
                },
                "$defs" => value
                    .as_object()
                    .is_some_and(|m| m.values().all(|v| enforced(v, false))),
                "items" => enforced(value, false),
                "prefixItems" | "oneOf" | "anyOf" => value
                    .as_array()
                    .is_some_and(|a| a.iter().all(|v| enforced(v, false))),
                _ => true,
            }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
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
        assert!(deserialization_enforces(&schema));
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
            assert!(!deserialization_enforces(&constrained), "{constrained}");
        }
    }

    #[test]
    fn fields_named_like_keywords_are_bounded_too() {
        let mut schema = json!({"type": "object", "properties": {
            "type": {"type": "integer", "format": "uint8"},
            "format": {"type": "integer", "format": "int8"},
            "minimum": {"type": "integer", "format": "uint16"},
            "maximum": {"type": "integer", "format": "int16", "maximum": 7}
        }});
        bound_integers(&mut schema);
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
    fn integers_get_their_type_bounds() {
        let mut schema = json!({"properties": {
            "n": {"type": "integer", "format": "uint32", "minimum": 0},
            "m": {"type": ["integer", "null"], "format": "int32", "maximum": 10}
        }});
        bound_integers(&mut schema);
        assert_eq!(schema["properties"]["n"]["maximum"], json!(u32::MAX));
        assert_eq!(schema["properties"]["m"]["minimum"], json!(i32::MIN));
        assert_eq!(schema["properties"]["m"]["maximum"], json!(10));
    }
}

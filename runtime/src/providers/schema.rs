//! Each provider's dialect of JSON Schema, derived from the canonical one.
//!
//! The rule for every transform: change spelling, never meaning. Where a
//! provider cannot express a construct, the export fails naming the tool,
//! the field path and the construct. The one deliberate change of meaning,
//! OpenAI strict mode's "every property required, optional ones nullable",
//! is mapped back when calls come in (see [`strip_absent_nulls`]).

use serde_json::{Map, Value};

use super::ExportError;
use super::node::{Node, Object};

/// Where in the arguments a schema node applies, for error messages:
/// `/address/zip`, `/tags/items`.
///
/// Borrowed segments, rendered only when an error needs them: an export
/// that succeeds builds no path.
#[derive(Clone, Copy)]
enum FieldPath<'a> {
    /// The arguments themselves.
    Root,
    /// A definition under `$defs`.
    Definition(&'a str),
    /// A field (or `items`) below another path.
    Below(&'a FieldPath<'a>, &'a str),
}

impl<'a> FieldPath<'a> {
    fn push(&'a self, segment: &'a str) -> FieldPath<'a> {
        FieldPath::Below(self, segment)
    }

    fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        if out.is_empty() {
            "(arguments)".to_owned()
        } else {
            out
        }
    }

    fn write(&self, out: &mut String) {
        match self {
            FieldPath::Root => {}
            FieldPath::Definition(name) => {
                out.push_str("$defs/");
                out.push_str(name);
            }
            FieldPath::Below(parent, segment) => {
                parent.write(out);
                out.push('/');
                out.push_str(segment);
            }
        }
    }
}

struct Context<'a> {
    tool: &'a str,
    provider: &'static str,
    defs: Option<&'a Map<String, Value>>,
}

impl<'a> Context<'a> {
    fn error(&self, path: &FieldPath<'_>, construct: impl Into<String>) -> ExportError {
        ExportError {
            tool: self.tool.to_owned(),
            provider: self.provider,
            path: path.render(),
            construct: construct.into(),
        }
    }

    /// The schema a local `$ref` points to.
    fn resolve(&self, reference: &str, path: &FieldPath<'_>) -> Result<&'a Value, ExportError> {
        reference
            .strip_prefix("#/$defs/")
            .and_then(|name| self.defs?.get(name))
            .ok_or_else(|| self.error(path, format!("a `$ref` to `{reference}` outside `$defs`")))
    }
}

/// Whether a schema's `type` keyword (`ty`) is the single type `name`.
fn type_is(ty: Option<&Value>, name: &str) -> bool {
    ty.and_then(Value::as_str) == Some(name)
}

/// Whether an exported schema's `type` is the single type `name`.
fn exported_type_is(schema: &Object<'_>, name: &str) -> bool {
    schema.get("type").is_some_and(|t| t.is_str(name))
}

/// Annotations every dialect may drop: they do not constrain values.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Standard JSON Schema without `$schema` (Anthropic, OpenAI non-strict,
/// Gemini `parametersJsonSchema`).
pub(super) fn standard(schema: &Value) -> Node<'_> {
    match schema {
        Value::Object(map) => {
            let mut out = Object::with_capacity(map.len() + 2);
            for (keyword, value) in map {
                if keyword != "$schema" {
                    out.insert(keyword, Node::Same(value));
                }
            }
            Node::Object(out)
        }
        other => Node::Same(other),
    }
}

// ------------------------------------------------------------ OpenAI strict

const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const STRICT_MAX_DEPTH: usize = 10;

/// OpenAI Structured Outputs (`strict: true`): every object closed, every
/// property required (optional ones nullable), only supported keywords.
///
/// The result accepts a subset of what the executor accepts, never more.
pub(super) fn openai_strict<'a>(tool: &'a str, schema: &'a Value) -> Result<Node<'a>, ExportError> {
    let root = schema
        .as_object()
        .ok_or_else(|| ExportError::root(tool, "OpenAI strict"))?;
    let defs = root.get("$defs").and_then(Value::as_object);
    let cx = Context {
        tool,
        provider: "OpenAI strict",
        defs,
    };
    let mut out = strict_node(&cx, schema, &FieldPath::Root)?;
    if !exported_type_is(&out, "object") {
        return Err(cx.error(&FieldPath::Root, "a root that is not an object"));
    }
    let converted = match defs {
        Some(defs) => {
            let mut converted = Object::with_capacity(defs.len());
            for (name, def) in defs {
                let path = FieldPath::Definition(name);
                converted.insert(name, Node::Object(strict_node(&cx, def, &path)?));
            }
            Some(converted)
        }
        None => None,
    };
    let depth = object_depth(&out, converted.as_ref(), &mut Vec::new());
    if depth > STRICT_MAX_DEPTH {
        return Err(cx.error(
            &FieldPath::Root,
            format!("{depth} levels of nested objects (at most {STRICT_MAX_DEPTH})"),
        ));
    }
    if let Some(converted) = converted {
        out.insert("$defs", Node::Object(converted));
    }
    Ok(Node::Object(out))
}

fn strict_node<'a>(
    cx: &Context<'a>,
    schema: &'a Value,
    path: &FieldPath<'_>,
) -> Result<Object<'a>, ExportError> {
    let map = match schema {
        Value::Object(map) if !map.is_empty() => map,
        _ => return Err(cx.error(path, "a value of any type (strict mode needs a type)")),
    };
    let mut out = Object::with_capacity(map.len() + 2);
    let mut length: (Option<u64>, Option<u64>) = (None, None);
    for (keyword, value) in map {
        match keyword.as_str() {
            "$defs" => {} // converted once, at the root
            "type" | "enum" | "const" | "description" | "title" | "pattern" | "multipleOf"
            | "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "minItems"
            | "maxItems" | "$ref" => {
                out.insert(keyword, Node::Same(value));
            }
            "format" => {
                if value.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f)) {
                    out.insert(keyword, Node::Same(value));
                }
                // Other formats (int64, uint8, uri...) are annotations the
                // executor does not enforce either: dropping them changes nothing.
            }
            "required" => {} // rebuilt below from every property
            "properties" => {
                let required = map.get("required").and_then(Value::as_array);
                let required = required.map_or(&[][..], Vec::as_slice);
                let properties = value.as_object();
                let mut converted = Object::with_capacity(properties.map_or(0, Map::len));
                for (name, property) in properties.into_iter().flatten() {
                    let mut property = strict_node(cx, property, &path.push(name))?;
                    if !required.iter().any(|r| r == name.as_str()) {
                        property = nullable(property);
                    }
                    converted.insert(name, Node::Object(property));
                }
                // Every property, in the order of `properties`.
                let every = properties.map_or_else(|| Node::Array(Vec::new()), Node::Keys);
                out.insert("required", every);
                out.insert("properties", Node::Object(converted));
            }
            "additionalProperties" => {
                if value != &Value::Bool(false) {
                    return Err(cx.error(
                        path,
                        "a map with free-form keys (strict mode closes every object)",
                    ));
                }
            }
            "items" => {
                let items = strict_node(cx, value, &path.push("items"))?;
                out.insert("items", Node::Object(items));
            }
            "anyOf" | "oneOf" => {
                // schemars writes `oneOf` for enums whose variants are told
                // apart by a tag or by shape, so no value matches two
                // branches and `anyOf` means the same.
                let branches = value.as_array().map_or(&[][..], Vec::as_slice);
                let converted = branches
                    .iter()
                    .map(|b| strict_node(cx, b, path).map(Node::Object))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert("anyOf", Node::Array(converted));
            }
            "minLength" => length.0 = value.as_u64(),
            "maxLength" => length.1 = value.as_u64(),
            "default" => {} // an annotation; strict mode sends every field anyway
            other if ANNOTATIONS.contains(&other) => {}
            other => return Err(cx.error(path, format!("the `{other}` keyword"))),
        }
    }
    // `type` is copied as it is.
    let object_type = type_is(map.get("type"), "object");
    let has_properties = out.contains_key("properties");
    if object_type && !has_properties {
        if map
            .get("additionalProperties")
            .is_none_or(|a| a != &Value::Bool(false))
        {
            return Err(cx.error(
                path,
                "an object with free-form keys (strict mode closes every object)",
            ));
        }
        out.insert("properties", Node::Object(Object::default()));
        out.insert("required", Node::Array(Vec::new()));
    }
    if object_type || has_properties {
        out.insert("additionalProperties", Node::Made(Value::Bool(false)));
    }
    if out.len() > 1
        && let Some(reference) = out.remove("$ref")
    {
        // A `$ref` beside other keywords is not plain JSON Schema for
        // OpenAI; the same reference as the single branch of an `anyOf` is.
        let branch = Object::of([("$ref", reference)]);
        out.insert("anyOf", Node::Array(vec![Node::Object(branch)]));
    }
    if length != (None, None) {
        // Strict mode has no string lengths; the same rule as a pattern.
        if out.contains_key("pattern") {
            return Err(cx.error(path, "a string with both a length limit and a pattern"));
        }
        let min = length.0.unwrap_or(0);
        let max = length.1.map(|m| m.to_string()).unwrap_or_default();
        out.insert(
            "pattern",
            Node::Made(Value::String(format!("^[\\s\\S]{{{min},{max}}}$"))),
        );
    }
    Ok(out)
}

/// `schema`, also accepting `null`.
fn nullable(mut schema: Object<'_>) -> Object<'_> {
    let simple = !schema.contains_key("enum") && !schema.contains_key("const");
    match schema.get("type") {
        Some(t) if simple && t.as_str().is_some() => {
            let single = schema.remove("type").expect("just read");
            schema.insert("type", Node::Array(vec![single, Node::Str("null")]));
            return schema;
        }
        Some(Node::Same(Value::Array(types))) if types.iter().any(|t| t == "null") => {
            return schema;
        }
        _ => {}
    }
    if let Some(Node::Array(branches)) = schema.get("anyOf")
        && branches
            .iter()
            .any(|b| b.as_object().is_some_and(|b| exported_type_is(b, "null")))
    {
        return schema;
    }
    let null = Object::of([("type", Node::Str("null"))]);
    Object::of([(
        "anyOf",
        Node::Array(vec![Node::Object(schema), Node::Object(null)]),
    )])
}

/// The deepest nesting of objects in an exported schema, following `$ref`s
/// into the exported definitions but not around cycles.
fn object_depth<'n>(
    schema: &'n Object<'_>,
    defs: Option<&'n Object<'_>>,
    seen: &mut Vec<&'n str>,
) -> usize {
    let mut own = 0;
    let mut deepest = 0;
    let mut below = |node: &'n Node<'_>, seen: &mut Vec<&'n str>| {
        if let Some(object) = node.as_object() {
            deepest = deepest.max(object_depth(object, defs, seen));
        }
    };
    for (keyword, value) in schema.iter() {
        match (keyword, value) {
            ("properties", Node::Object(properties)) => {
                own = 1;
                for (_, property) in properties.iter() {
                    below(property, seen);
                }
            }
            ("properties", _) => own = 1,
            ("items", items) => below(items, seen),
            ("anyOf", Node::Array(branches)) => {
                for branch in branches {
                    below(branch, seen);
                }
            }
            ("$ref", reference) => {
                if let Some(name) = reference.as_str().and_then(|r| r.strip_prefix("#/$defs/"))
                    && !seen.contains(&name)
                    && let Some(target) = defs.and_then(|d| d.get(name))
                {
                    seen.push(name);
                    below(target, seen);
                    seen.pop();
                }
            }
            _ => {}
        }
    }
    own + deepest
}

// ------------------------------------------------------- Gemini `parameters`

/// Gemini `FunctionDeclaration.parameters`: an OpenAPI 3.0 subset, with
/// every `$ref` inlined and type lists written as `nullable`.
pub(super) fn gemini<'a>(tool: &'a str, schema: &'a Value) -> Result<Node<'a>, ExportError> {
    let root = schema
        .as_object()
        .ok_or_else(|| ExportError::root(tool, "Gemini"))?;
    let cx = Context {
        tool,
        provider: "Gemini",
        defs: root.get("$defs").and_then(Value::as_object),
    };
    let out = gemini_node(&cx, schema, &FieldPath::Root, &mut Vec::new())?;
    if !exported_type_is(&out, "object") {
        return Err(cx.error(&FieldPath::Root, "a root that is not an object"));
    }
    Ok(Node::Object(out))
}

fn gemini_node<'a>(
    cx: &Context<'a>,
    schema: &'a Value,
    path: &FieldPath<'_>,
    inlining: &mut Vec<&'a str>,
) -> Result<Object<'a>, ExportError> {
    let map = match schema {
        Value::Object(map) if !map.is_empty() => map,
        _ => return Err(cx.error(path, "a value of any type (Gemini needs a type)")),
    };
    if let Some(Value::String(reference)) = map.get("$ref") {
        if inlining.contains(&reference.as_str()) {
            return Err(cx.error(
                path,
                format!("a recursive type (`{reference}`), which cannot be inlined"),
            ));
        }
        let target = cx.resolve(reference, path)?;
        inlining.push(reference);
        let mut inlined = gemini_node(cx, target, path, inlining)?;
        inlining.pop();
        // Sibling annotations (a field's description) override the target's.
        for key in ["description", "title", "default"] {
            if let Some(value) = map.get(key) {
                inlined.insert(key, Node::Same(value));
            }
        }
        return Ok(inlined);
    }

    let mut out = Object::with_capacity(map.len() + 2);
    let mut nullable = false;
    let is_integer = map.get("type").is_some_and(|t| {
        t == "integer"
            || t.as_array()
                .is_some_and(|a| a.iter().any(|t| t == "integer"))
    });
    for (keyword, value) in map {
        match keyword.as_str() {
            "$defs" => {}
            "type" => match value {
                Value::String(_) => out.insert("type", Node::Same(value)),
                Value::Array(types) => {
                    let mut others = types.iter().filter(|t| *t != "null");
                    nullable |= others.clone().count() < types.len();
                    match (others.next(), others.next()) {
                        (None, _) => return Err(cx.error(path, "a value that can only be null")),
                        (Some(only), None) => out.insert("type", Node::Same(only)),
                        (Some(_), Some(_)) => {
                            return Err(cx.error(path, "a value of several types"));
                        }
                    }
                }
                _ => return Err(cx.error(path, "a malformed `type`")),
            },
            "format" => {
                let kept = matches!(
                    (map.get("type").and_then(Value::as_str), value.as_str()),
                    (Some("integer"), Some("int32" | "int64"))
                        | (Some("number"), Some("float" | "double"))
                        | (Some("string"), Some("date-time" | "enum"))
                );
                if kept {
                    out.insert("format", Node::Same(value));
                }
            }
            "title" | "description" | "default" | "pattern" | "minLength" | "maxLength"
            | "minItems" | "maxItems" | "minProperties" | "maxProperties" | "minimum"
            | "maximum" | "required" => {
                out.insert(keyword, Node::Same(value));
            }
            "enum" => {
                let values = value.as_array().map_or(&[][..], Vec::as_slice);
                let strings: Vec<Node<'a>> = values
                    .iter()
                    .filter(|v| !v.is_null())
                    .map(Node::Same)
                    .collect();
                nullable |= strings.len() < values.len();
                if values.iter().any(|v| !v.is_null() && !v.is_string()) {
                    return Err(cx.error(path, "an enum of values that are not strings"));
                }
                out.insert("enum", Node::Array(strings));
            }
            "const" => match value {
                Value::String(_) => out.insert("enum", Node::Array(vec![Node::Same(value)])),
                _ => return Err(cx.error(path, "a constant that is not a string")),
            },
            "exclusiveMinimum" | "exclusiveMaximum" => {
                let Some(bound) = value.as_i64().filter(|_| is_integer) else {
                    return Err(cx.error(
                        path,
                        format!("an exclusive bound (`{keyword}`) on a number"),
                    ));
                };
                // For integers, `> n` is `>= n + 1`.
                let (key, inclusive) = if keyword == "exclusiveMinimum" {
                    ("minimum", bound + 1)
                } else {
                    ("maximum", bound - 1)
                };
                out.insert(key, Node::Made(Value::from(inclusive)));
            }
            "properties" => {
                let properties = value.as_object();
                let mut converted = Object::with_capacity(properties.map_or(0, Map::len));
                for (name, property) in properties.into_iter().flatten() {
                    let property = gemini_node(cx, property, &path.push(name), inlining)?;
                    converted.insert(name, Node::Object(property));
                }
                out.insert("properties", Node::Object(converted));
            }
            "additionalProperties" => {
                if value != &Value::Bool(false) {
                    return Err(cx.error(path, "a map with free-form keys"));
                }
                // Gemini has no closed objects; it only ever sends declared properties.
            }
            "items" => {
                let items = gemini_node(cx, value, &path.push("items"), inlining)?;
                out.insert("items", Node::Object(items));
            }
            "anyOf" | "oneOf" => {
                let mut branches = Vec::new();
                for branch in value.as_array().into_iter().flatten() {
                    if type_is(branch.get("type"), "null")
                        && branch.as_object().is_some_and(|b| b.len() == 1)
                    {
                        nullable = true;
                    } else {
                        branches.push(gemini_node(cx, branch, path, inlining)?);
                    }
                }
                if branches.len() == 1 {
                    // `X or null` is `X` with `nullable`.
                    for (k, v) in branches.remove(0).into_entries() {
                        out.insert_new(k, v);
                    }
                } else {
                    let branches = branches.into_iter().map(Node::Object).collect();
                    out.insert("anyOf", Node::Array(branches));
                }
            }
            other if ANNOTATIONS.contains(&other) => {}
            other => return Err(cx.error(path, format!("the `{other}` keyword"))),
        }
    }
    if nullable {
        out.insert("nullable", Node::Made(Value::Bool(true)));
    }
    Ok(out)
}

// ------------------------------------------------------------ calls coming in

/// Removes `null` values of properties the canonical schema does not require,
/// recursively: what OpenAI strict mode sends for "absent".
///
/// For an `Option` field `null` already means `None`; for a field with a
/// default it now means "use the default", exactly as if it were absent.
pub(crate) fn strip_absent_nulls(schema: &Value, arguments: &mut Value) {
    let defs = schema.get("$defs").and_then(Value::as_object);
    strip(schema, defs, arguments, 0);
}

fn strip(schema: &Value, defs: Option<&Map<String, Value>>, value: &mut Value, depth: usize) {
    // Recursive types are finite in any one value, but stay bounded anyway.
    if depth > 64 {
        return;
    }
    let Some(schema) = resolve_object_schema(schema, defs) else {
        return;
    };
    match value {
        Value::Object(object) => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            object.retain(|k, v| !v.is_null() || required.contains(&k.as_str()));
            if let Some(Value::Object(properties)) = schema.get("properties") {
                for (name, field) in object.iter_mut() {
                    if let Some(property) = properties.get(name) {
                        strip(property, defs, field, depth + 1);
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for item in items {
                    strip(item_schema, defs, item, depth + 1);
                }
            }
        }
        _ => {}
    }
}

/// Follows `$ref`s and picks the single non-null branch of an `anyOf`.
fn resolve_object_schema<'a>(
    schema: &'a Value,
    defs: Option<&'a Map<String, Value>>,
) -> Option<&'a Value> {
    let mut current = schema;
    for _ in 0..16 {
        if let Some(reference) = current.get("$ref").and_then(Value::as_str) {
            current = defs?.get(reference.strip_prefix("#/$defs/")?)?;
            continue;
        }
        if let Some(Value::Array(branches)) = current.get("anyOf").or_else(|| current.get("oneOf"))
        {
            let mut non_null = branches.iter().filter(|b| !type_is(b.get("type"), "null"));
            match (non_null.next(), non_null.next()) {
                (Some(only), None) => {
                    current = only;
                    continue;
                }
                _ => return None,
            }
        }
        return Some(current);
    }
    None
}

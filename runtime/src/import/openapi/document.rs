//! An OpenAPI document read into operations: for each, what a call sends
//! (its route) and the one input object a model fills in. What this
//! import cannot send exactly as the document describes is refused, with
//! the reason, operation by operation: it never guesses.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::effect::Effect;
use crate::import::ImportError;

/// The methods an operation may have, as OpenAPI spells them.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// Headers OpenAPI says a parameter definition may not describe (they are
/// the request's own), and that this import never takes from arguments.
const RESERVED_HEADERS: [&str; 3] = ["accept", "content-type", "authorization"];

/// Keywords whose values are data, not schemas: a `$ref` in them is text.
const DATA_KEYWORDS: [&str; 5] = ["enum", "const", "default", "example", "examples"];

/// The input property that holds an operation's JSON body.
pub(super) const BODY: &str = "body";

/// The parameters the application supplies itself (its credentials): left
/// out of every schema and never read from arguments.
#[derive(Debug, Default, Clone)]
pub(super) struct Supplied {
    /// Header names, lowercase.
    pub(super) headers: Vec<String>,
    /// Query parameter names.
    pub(super) query: Vec<String>,
}

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum In {
    Path,
    Query,
    Header,
}

/// One parameter of a route.
#[derive(Debug, Clone)]
pub(super) struct Param {
    pub(super) name: String,
    pub(super) at: In,
    /// For a query array: `true` repeats the name (`?a=1&a=2`), `false`
    /// joins the values with commas (`?a=1,2`).
    pub(super) explode: bool,
}

/// What a call of one operation sends.
#[derive(Debug)]
pub(super) struct Route {
    pub(super) method: reqwest::Method,
    /// The path template, `{name}` for each path parameter.
    pub(super) path: String,
    pub(super) params: Vec<Param>,
    /// The media type of the JSON body, when the operation takes one.
    pub(super) body: Option<String>,
}

/// One operation, ready to become a tool.
#[derive(Debug)]
pub(super) struct Operation {
    /// Its `operationId`, or its method and path (`GET /pets/{id}`): what
    /// the application allowlists and decides effects by.
    pub(super) remote: String,
    /// What its key and name are made from: the `operationId`, or the
    /// method and path in words (`get_pets_id`).
    pub(super) slug: String,
    pub(super) title: Option<String>,
    pub(super) description: Option<String>,
    pub(super) effect: Effect,
    pub(super) input_schema: Value,
    pub(super) route: Route,
}

/// An operation that cannot be imported: its remote name and why.
pub(super) type Refused = (String, String);

/// Every operation of `document`, in path and method order, each read or
/// refused with its reason; `Err` when the document itself is not an
/// OpenAPI 3.0 or 3.1 document with paths.
pub(super) fn operations(
    document: &Value,
    supplied: &Supplied,
) -> Result<Vec<Result<Operation, Refused>>, ImportError> {
    let refuse = |reason: &str| ImportError::Document {
        reason: reason.to_owned(),
    };
    let version = document
        .get("openapi")
        .and_then(Value::as_str)
        .ok_or_else(|| refuse("it has no `openapi` version"))?;
    let v30 = match version.split('.').take(2).collect::<Vec<_>>()[..] {
        ["3", "0"] => true,
        ["3", "1"] => false,
        _ => {
            return Err(refuse(&format!(
                "it is OpenAPI `{version}`, not 3.0 or 3.1"
            )));
        }
    };
    let paths = document
        .get("paths")
        .and_then(Value::as_object)
        .ok_or_else(|| refuse("it has no `paths`"))?;
    let reader = Reader {
        root: document,
        v30,
        supplied,
    };
    let mut operations = Vec::new();
    for (path, item) in paths {
        let Some(item) = item.as_object() else {
            return Err(refuse(&format!("the path `{path}` is not an object")));
        };
        for method in METHODS {
            let Some(operation) = item.get(method) else {
                continue;
            };
            let remote = operation
                .get("operationId")
                .and_then(Value::as_str)
                .map_or_else(
                    || format!("{} {path}", method.to_uppercase()),
                    str::to_owned,
                );
            let read = if item.contains_key("$ref") {
                Err(format!(
                    "its path item is a `$ref` (`{path}`), which this import does not follow"
                ))
            } else {
                reader.operation(method, path, item, operation, &remote)
            };
            operations.push(read.map_err(|reason| (remote, reason)));
        }
    }
    Ok(operations)
}

/// Reads the operations of one document.
struct Reader<'a> {
    root: &'a Value,
    /// OpenAPI 3.0, whose schemas say `nullable` and boolean exclusive
    /// bounds, which JSON Schema 2020-12 spells otherwise.
    v30: bool,
    supplied: &'a Supplied,
}

impl Reader<'_> {
    fn operation(
        &self,
        method: &str,
        path: &str,
        item: &Map<String, Value>,
        operation: &Value,
        remote: &str,
    ) -> Result<Operation, String> {
        let mut defs = Defs::default();
        let mut properties = Map::new();
        let mut required = Vec::new();
        let mut params = Vec::new();
        for param in self.parameters(item, operation)? {
            let Some((param, schema, needed)) = self.parameter(param, &mut defs)? else {
                continue;
            };
            if properties.contains_key(&param.name) {
                return Err(format!(
                    "two of its parameters are named `{}`, which one input object cannot hold",
                    param.name
                ));
            }
            if needed {
                required.push(Value::String(param.name.clone()));
            }
            properties.insert(param.name.clone(), schema);
            params.push(param);
        }
        for name in path_names(path)? {
            if !params.iter().any(|p| p.at == In::Path && p.name == name) {
                return Err(format!(
                    "its path names `{{{name}}}`, which no path parameter describes"
                ));
            }
        }
        let body = match operation.get("requestBody") {
            None => None,
            Some(body) => {
                let (media_type, schema, needed) = self.body(body, &mut defs)?;
                if properties.contains_key(BODY) {
                    return Err(format!(
                        "a parameter is named `{BODY}`, the name its JSON body takes"
                    ));
                }
                if needed {
                    required.push(Value::String(BODY.to_owned()));
                }
                properties.insert(BODY.to_owned(), schema);
                Some(media_type)
            }
        };
        let mut input_schema = json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false,
        });
        let defs = defs.resolve(self)?;
        if !defs.is_empty() {
            input_schema["$defs"] = Value::Object(defs);
        }
        let text = |key: &str| {
            operation
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|text| !text.is_empty())
                .map(str::to_owned)
        };
        let (summary, description) = (text("summary"), text("description"));
        let (title, description) = match (summary, description) {
            (Some(summary), Some(description)) => (Some(summary), Some(description)),
            (summary, description) => (None, description.or(summary)),
        };
        let slug = match operation.get("operationId").and_then(Value::as_str) {
            Some(id) => id.to_owned(),
            None => words(&format!("{method} {path}")),
        };
        Ok(Operation {
            remote: remote.to_owned(),
            slug,
            title,
            description,
            effect: match method {
                "get" | "head" => Effect::Read,
                "delete" => Effect::Destructive,
                _ => Effect::Write,
            },
            input_schema,
            route: Route {
                method: reqwest::Method::from_bytes(method.to_uppercase().as_bytes())
                    .map_err(|e| e.to_string())?,
                path: path.to_owned(),
                params,
                body,
            },
        })
    }

    /// The parameters of `operation`: the path item's, each replaced by the
    /// operation's own of the same name and place, then the operation's.
    fn parameters<'v>(
        &'v self,
        item: &'v Map<String, Value>,
        operation: &'v Value,
    ) -> Result<Vec<&'v Map<String, Value>>, String> {
        let list = |holder: Option<&'v Value>| -> Result<Vec<&'v Map<String, Value>>, String> {
            let Some(list) = holder else {
                return Ok(Vec::new());
            };
            let list = list.as_array().ok_or("its `parameters` is not a list")?;
            list.iter()
                .map(|param| {
                    self.resolve(param, "parameters")?
                        .as_object()
                        .ok_or_else(|| "a parameter is not an object".to_owned())
                })
                .collect()
        };
        let own = list(operation.get("parameters"))?;
        let place = |p: &Map<String, Value>| (p.get("name").cloned(), p.get("in").cloned());
        let mut all: Vec<_> = list(item.get("parameters"))?
            .into_iter()
            .filter(|shared| !own.iter().any(|p| place(p) == place(shared)))
            .collect();
        all.extend(own);
        Ok(all)
    }

    /// One parameter: where it goes, its schema (with its description)
    /// and whether it is required; `None` for one the request sets itself.
    fn parameter(
        &self,
        param: &Map<String, Value>,
        defs: &mut Defs,
    ) -> Result<Option<(Param, Value, bool)>, String> {
        let name = param
            .get("name")
            .and_then(Value::as_str)
            .ok_or("a parameter has no name")?;
        let at = match param.get("in").and_then(Value::as_str) {
            Some("path") => In::Path,
            Some("query") => In::Query,
            Some("header") => In::Header,
            Some(other) => {
                return Err(format!(
                    "its parameter `{name}` is in `{other}`, which this import does not send"
                ));
            }
            None => return Err(format!("its parameter `{name}` says nowhere it goes")),
        };
        let lower = name.to_ascii_lowercase();
        let supplied = match at {
            In::Header => {
                RESERVED_HEADERS.contains(&lower.as_str()) || self.supplied.headers.contains(&lower)
            }
            In::Query => self.supplied.query.iter().any(|q| q == name),
            In::Path => false,
        };
        if supplied {
            return Ok(None);
        }
        if param.contains_key("content") {
            return Err(format!(
                "its parameter `{name}` is described by `content`, not `schema`"
            ));
        }
        let default_style = match at {
            In::Path | In::Header => "simple",
            In::Query => "form",
        };
        if let Some(style) = param.get("style").and_then(Value::as_str)
            && style != default_style
        {
            return Err(format!(
                "its parameter `{name}` has style `{style}`, which this import does not send"
            ));
        }
        let schema = param.get("schema").cloned().unwrap_or_else(|| json!({}));
        let shape = self.resolve(&schema, "schemas")?;
        if shape.get("type").and_then(Value::as_str) == Some("object")
            || shape.get("properties").is_some()
        {
            return Err(format!(
                "its parameter `{name}` is an object, which this import does not serialize"
            ));
        }
        let mut schema = self.schema(schema, defs)?;
        if let (Some(description), Value::Object(map)) = (
            param.get("description").and_then(Value::as_str),
            &mut schema,
        ) && !map.contains_key("description")
        {
            map.insert("description".into(), description.into());
        }
        let needed = at == In::Path || param.get("required") == Some(&Value::Bool(true));
        let explode = param
            .get("explode")
            .and_then(Value::as_bool)
            .unwrap_or(at == In::Query);
        let param = Param {
            name: name.to_owned(),
            at,
            explode,
        };
        Ok(Some((param, schema, needed)))
    }

    /// The JSON body: its media type, its schema and whether it is
    /// required.
    fn body(&self, body: &Value, defs: &mut Defs) -> Result<(String, Value, bool), String> {
        let body = self.resolve(body, "requestBodies")?;
        let content = body
            .get("content")
            .and_then(Value::as_object)
            .ok_or("its request body has no `content`")?;
        let json = content
            .iter()
            .find(|(media_type, _)| is_json(media_type))
            .ok_or_else(|| {
                let types: Vec<&str> = content.keys().map(String::as_str).collect();
                format!("its request body is `{}`, not JSON", types.join("`, `"))
            })?;
        let schema = json.1.get("schema").cloned().unwrap_or_else(|| json!({}));
        let mut schema = self.schema(schema, defs)?;
        if let (Some(description), Value::Object(map)) =
            (body.get("description").and_then(Value::as_str), &mut schema)
            && !map.contains_key("description")
        {
            map.insert("description".into(), description.into());
        }
        let needed = body.get("required") == Some(&Value::Bool(true));
        Ok((json.0.clone(), schema, needed))
    }

    /// `value`, or what its `$ref` names under `#/components/{kind}/`
    /// (followed through further `$ref`s).
    fn resolve<'v>(&'v self, value: &'v Value, kind: &str) -> Result<&'v Value, String> {
        let mut value = value;
        for _ in 0..16 {
            let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
                return Ok(value);
            };
            let prefix = format!("#/components/{kind}/");
            if !reference.starts_with(&prefix) {
                return Err(format!(
                    "it refers to `{reference}`, which is not under `{prefix}`"
                ));
            }
            value = self.root.pointer(&reference[1..]).ok_or_else(|| {
                format!("it refers to `{reference}`, which the document does not define")
            })?;
        }
        Err("its `$ref`s go round in a circle".to_owned())
    }

    /// `schema` as JSON Schema 2020-12 within the tool's input schema: its
    /// references to `#/components/schemas/` made references to the input
    /// schema's `$defs` (and noted in `defs`), and, for OpenAPI 3.0,
    /// `nullable` and boolean exclusive bounds spelled as 2020-12 does.
    fn schema(&self, mut schema: Value, defs: &mut Defs) -> Result<Value, String> {
        self.convert(&mut schema, defs)?;
        Ok(schema)
    }

    fn convert(&self, value: &mut Value, defs: &mut Defs) -> Result<(), String> {
        match value {
            Value::Array(items) => items.iter_mut().try_for_each(|v| self.convert(v, defs)),
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get_mut("$ref") {
                    let name = reference
                        .strip_prefix("#/components/schemas/")
                        .ok_or_else(|| {
                            format!(
                                "it refers to `{reference}`, which is not under `#/components/schemas/`"
                            )
                        })?
                        .to_owned();
                    *reference = format!("#/$defs/{name}");
                    defs.wanted.push(name);
                }
                for (keyword, value) in map.iter_mut() {
                    if !DATA_KEYWORDS.contains(&keyword.as_str()) {
                        self.convert(value, defs)?;
                    }
                }
                if self.v30 {
                    from_openapi_30(map);
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// The component schemas an input schema refers to, gathered into its
/// `$defs`.
#[derive(Default)]
struct Defs {
    /// Names referred to, not yet copied.
    wanted: Vec<String>,
}

impl Defs {
    /// Every schema referred to, and those they refer to, converted.
    fn resolve(mut self, reader: &Reader<'_>) -> Result<Map<String, Value>, String> {
        let mut done = BTreeMap::new();
        while let Some(name) = self.wanted.pop() {
            if done.contains_key(&name) {
                continue;
            }
            let schema = reader
                .root
                .pointer(&format!("/components/schemas/{name}"))
                .cloned()
                .ok_or_else(|| {
                    format!(
                        "it refers to `#/components/schemas/{name}`, which the document does not define"
                    )
                })?;
            // Inserted before converting, so that a schema referring to
            // itself is copied once.
            done.insert(name.clone(), Value::Null);
            let schema = reader.schema(schema, &mut self)?;
            done.insert(name, schema);
        }
        // Keys as JSON Pointer segments: as they were written in `$ref`.
        Ok(done.into_iter().map(|(k, v)| (unescape(&k), v)).collect())
    }
}

/// A JSON Pointer segment's text (`~1` is `/`, `~0` is `~`).
fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// An OpenAPI 3.0 schema object's `nullable: true` as a `null` type (or
/// an `anyOf` with one), and its boolean `exclusiveMinimum` and
/// `exclusiveMaximum` as the numeric bounds of 2020-12.
fn from_openapi_30(map: &mut Map<String, Value>) {
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match map.get(exclusive) {
            Some(Value::Bool(true)) => match map.remove(bound) {
                Some(limit) => _ = map.insert(exclusive.to_owned(), limit),
                None => _ = map.remove(exclusive),
            },
            Some(Value::Bool(false)) => _ = map.remove(exclusive),
            _ => {}
        }
    }
    if map.remove("nullable") != Some(Value::Bool(true)) {
        return;
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
    match map.get_mut("type") {
        Some(Value::String(ty)) => {
            let ty = std::mem::take(ty);
            map.insert("type".to_owned(), json!([ty, "null"]));
        }
        _ => {
            let inner = std::mem::take(map);
            map.insert(
                "anyOf".to_owned(),
                json!([Value::Object(inner), {"type": "null"}]),
            );
        }
    }
}

/// Whether a media type is JSON: `application/json`, or a `+json` type.
pub(super) fn is_json(media_type: &str) -> bool {
    let essence = media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The names in a path template's braces.
fn path_names(path: &str) -> Result<Vec<&str>, String> {
    let mut names = Vec::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| format!("its path `{path}` has an unclosed `{{`"))?;
        names.push(&rest[open + 1..open + close]);
        rest = &rest[open + close + 1..];
    }
    Ok(names)
}

/// `text` as lowercase words joined by `_`: `GET /pets/{id}` is
/// `get_pets_id`.
fn words(text: &str) -> String {
    text.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join("_")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{In, Supplied, from_openapi_30, operations};

    #[test]
    fn openapi_30_schemas_become_2020_12() {
        let mut schema =
            json!({"type": "integer", "nullable": true, "minimum": 0, "exclusiveMinimum": true});
        from_openapi_30(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({"type": ["integer", "null"], "exclusiveMinimum": 0})
        );
        let mut schema = json!({"allOf": [{"$ref": "#/$defs/Pet"}], "nullable": true});
        from_openapi_30(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({"anyOf": [{"allOf": [{"$ref": "#/$defs/Pet"}]}, {"type": "null"}]})
        );
        let mut schema = json!({"type": "string", "enum": ["a"], "nullable": true});
        from_openapi_30(schema.as_object_mut().unwrap());
        assert_eq!(
            schema,
            json!({"type": ["string", "null"], "enum": ["a", null]})
        );
    }

    #[test]
    fn parameters_and_body_become_one_object_with_its_defs() {
        let document = json!({
            "openapi": "3.0.3",
            "paths": {"/pets/{id}": {
                "parameters": [{"$ref": "#/components/parameters/Id"}],
                "put": {
                    "operationId": "replacePet",
                    "parameters": [
                        {"name": "dry_run", "in": "query", "schema": {"type": "boolean"}},
                        {"name": "X-Api-Key", "in": "header", "required": true, "schema": {"type": "string"}},
                        {"name": "Accept", "in": "header", "schema": {"type": "string"}}
                    ],
                    "requestBody": {"required": true, "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Pet"}}}}
                },
                "get": {"parameters": [{"name": "session", "in": "cookie", "schema": {"type": "string"}}]}
            }},
            "components": {
                "parameters": {"Id": {"name": "id", "in": "path", "required": true, "description": "The pet.", "schema": {"type": "integer"}}},
                "schemas": {
                    "Pet": {"type": "object", "properties": {"name": {"type": "string", "nullable": true}, "owner": {"$ref": "#/components/schemas/Owner"}}},
                    "Owner": {"type": "object", "properties": {"pets": {"type": "array", "items": {"$ref": "#/components/schemas/Pet"}}}}
                }
            }
        });
        let supplied = Supplied {
            headers: vec!["x-api-key".into()],
            query: vec![],
        };
        let read = operations(&document, &supplied).unwrap();
        assert_eq!(read.len(), 2);
        let (remote, reason) = read[0].as_ref().unwrap_err();
        assert_eq!(remote, "GET /pets/{id}");
        assert!(reason.contains("`cookie`"), "{reason}");
        let put = read[1].as_ref().unwrap();
        assert_eq!(put.slug, "replacePet");
        assert_eq!(
            put.input_schema,
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "The pet."},
                    "dry_run": {"type": "boolean"},
                    "body": {"$ref": "#/$defs/Pet"}
                },
                "required": ["id", "body"],
                "additionalProperties": false,
                "$defs": {
                    "Owner": {"type": "object", "properties": {"pets": {"type": "array", "items": {"$ref": "#/$defs/Pet"}}}},
                    "Pet": {"type": "object", "properties": {"name": {"type": ["string", "null"]}, "owner": {"$ref": "#/$defs/Owner"}}}
                }
            })
        );
        let ats: Vec<In> = put.route.params.iter().map(|p| p.at).collect();
        assert_eq!(ats, [In::Path, In::Query]);
        assert_eq!(put.route.body.as_deref(), Some("application/json"));
    }

    #[test]
    fn what_cannot_be_sent_exactly_is_refused_with_its_reason() {
        let refused = |operation: serde_json::Value| {
            let document = json!({"openapi": "3.1.0", "paths": {"/x/{id}": {"post": operation}},
                "components": {"schemas": {}}});
            operations(&document, &Supplied::default()).unwrap()[0]
                .as_ref()
                .unwrap_err()
                .1
                .clone()
        };
        let id =
            json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}});
        for (operation, says) in [
            (json!({"parameters": []}), "no path parameter describes"),
            (
                json!({"parameters": [id, {"name": "f", "in": "query", "style": "deepObject", "schema": {"type": "string"}}]}),
                "style `deepObject`",
            ),
            (
                json!({"parameters": [id, {"name": "f", "in": "query", "schema": {"type": "object"}}]}),
                "is an object",
            ),
            (
                json!({"parameters": [id], "requestBody": {"content": {"multipart/form-data": {}}}}),
                "`multipart/form-data`, not JSON",
            ),
            (
                json!({"parameters": [id], "requestBody": {"content": {"application/json": {"schema": {"$ref": "other.yaml#/Pet"}}}}}),
                "`other.yaml#/Pet`",
            ),
            (
                json!({"parameters": [id], "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Gone"}}}}}),
                "does not define",
            ),
            (
                json!({"parameters": [id, {"name": "body", "in": "query", "schema": {"type": "string"}}],
                       "requestBody": {"content": {"application/json": {}}}}),
                "named `body`",
            ),
        ] {
            let reason = refused(operation);
            assert!(reason.contains(says), "{reason:?} does not say {says:?}");
        }
    }

    #[test]
    fn a_document_that_is_not_openapi_3_is_refused_whole() {
        for (document, says) in [
            (
                json!({"swagger": "2.0", "paths": {}}),
                "no `openapi` version",
            ),
            (json!({"openapi": "2.0", "paths": {}}), "not 3.0 or 3.1"),
            (json!({"openapi": "3.1.0"}), "no `paths`"),
        ] {
            let error = operations(&document, &Supplied::default()).unwrap_err();
            assert!(error.to_string().contains(says), "{error}");
        }
    }
}

//! Tools as a REST API: an OpenAPI 3.1 document with one `POST
//! /tools/{name}` operation per tool, for hosts that integrate tools over
//! OpenAPI rather than MCP (OpenWebUI, for one).
//!
//! [`document`] writes it for any list of tools (a caller's view, say).
//! With the `mcp` feature too, [`HttpOptions::rest`](crate::mcp::HttpOptions::rest)
//! serves those operations beside `/mcp`, at `/api`, through the same
//! authentication, views, policy and approvals, with the caller's
//! document at `/api/openapi.json`.
//!
//! Each operation:
//! - `operationId` is the tool's name, and `x-toolwright-key` and
//!   `x-toolwright-effect` say its key and effect;
//! - its request body is the tool's input schema (JSON Schema 2020-12,
//!   which OpenAPI 3.1 takes as it is; each `$defs` entry moves to
//!   `components/schemas` as `<name>.<definition>`);
//! - it answers 200 with the tool's result (its output schema, when the
//!   output type has one); 202 with the [`ApprovalRequest`](crate::approval::ApprovalRequest)
//!   when a write waits for a person's approval; 400 when the body is not
//!   JSON or the tool ran and failed (as a model is told: "The tool
//!   failed.", its error's text staying in the logs); 401 without valid
//!   credentials; 403 when the caller may not call it; 404 for a tool the
//!   caller cannot see or one that is disabled; 413 and 415 for a body
//!   too large or not declared JSON; 422 for arguments that break the
//!   schema, with each violation's path; 429 when the caller has too many
//!   approvals waiting;
//! - a write takes an optional `Idempotency-Key` header (see
//!   [`idempotency`](crate::idempotency)): a repeat returns the first
//!   call's result; the same key with other arguments is 422, and one
//!   whose first call still runs, failed or stopped midway is 409.

use serde_json::{Map, Value, json};

/// The request header that carries a write's idempotency key
/// (see [`idempotency`](crate::idempotency)).
pub const IDEMPOTENCY_HEADER: &str = "Idempotency-Key";

use crate::catalog::ToolEntry;
use crate::effect::Effect;

/// The OpenAPI 3.1 document of `tools`: one `POST /tools/{name}` per tool,
/// titled `title` at `version` (the service's own).
///
/// ```
/// use toolwright::{openapi, tool, Catalog};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let document = openapi::document(&catalog, "calculator", "1.0.0");
/// assert_eq!(document["openapi"], "3.1.0");
/// let add = &document["paths"]["/tools/add"]["post"];
/// assert_eq!(add["operationId"], "add");
/// assert_eq!(add["x-toolwright-key"], "math.add");
/// assert_eq!(add["x-toolwright-effect"], "read");
/// let body = &add["requestBody"]["content"]["application/json"]["schema"];
/// assert_eq!(body["required"], serde_json::json!(["a", "b"]));
/// assert_eq!(add["responses"]["200"]["content"]["application/json"]["schema"]["type"], "integer");
/// // A read never waits for approval.
/// assert!(add["responses"].get("202").is_none());
/// ```
pub fn document<'a>(
    tools: impl IntoIterator<Item = &'a ToolEntry>,
    title: &str,
    version: &str,
) -> Value {
    let mut schemas = components();
    let mut paths = Map::new();
    for tool in tools {
        let operation = operation(tool, &mut schemas);
        paths.insert(
            format!("/tools/{}", tool.name()),
            json!({ "post": operation }),
        );
    }
    json!({
        "openapi": "3.1.0",
        "info": { "title": title, "version": version },
        "paths": paths,
        "components": { "schemas": schemas },
    })
}

/// One tool's operation; its schemas' definitions join `schemas`.
fn operation(tool: &ToolEntry, schemas: &mut Map<String, Value>) -> Value {
    let name = tool.name();
    let input = moved_definitions(name, "input", tool.input_schema(), schemas);
    let output = match tool.output_schema() {
        Some(schema) => moved_definitions(name, "output", schema, schemas),
        None => json!({}),
    };
    let error = |description: &str| {
        json!({
            "description": description,
            "content": { "application/json": { "schema": { "$ref": "#/components/schemas/Error" } } },
        })
    };
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        json!({
            "description": "The tool's result.",
            "content": { "application/json": { "schema": output } },
        }),
    );
    if tool.effect() != Effect::Read {
        responses.insert(
            "202".into(),
            json!({
                "description": "A person must approve this exact call before it runs: call again with the same arguments once they have.",
                "content": { "application/json": { "schema": { "$ref": "#/components/schemas/ApprovalRequest" } } },
            }),
        );
        responses.insert(
            "429".into(),
            error("The caller has as many approvals waiting as allowed."),
        );
        responses.insert(
            "409".into(),
            error("A call with this `Idempotency-Key` is still running, or ran and failed or stopped midway: it is not run again."),
        );
        responses.insert(
            "503".into(),
            error("The audit trail or the store of idempotency keys is unavailable: nothing ran, or what ran failed closed."),
        );
    }
    responses.insert(
        "400".into(),
        error("The body is not JSON, or the tool ran and failed."),
    );
    responses.insert(
        "401".into(),
        json!({ "description": "No credentials, or ones the server does not accept." }),
    );
    responses.insert("403".into(), error("The caller may not call this tool."));
    responses.insert(
        "404".into(),
        error("No such tool for this caller, or it is disabled."),
    );
    responses.insert("413".into(), error("The body is over the server's limit."));
    responses.insert(
        "415".into(),
        error("The body is not declared `application/json`."),
    );
    responses.insert(
        "422".into(),
        error("The arguments break the tool's schema (`violations` says where), or the `Idempotency-Key` was first sent with other arguments."),
    );
    let mut operation = json!({
        "operationId": name,
        "description": tool.description(),
        "requestBody": {
            "required": true,
            "content": { "application/json": { "schema": input } },
        },
        "responses": responses,
        "x-toolwright-key": tool.key(),
        "x-toolwright-effect": tool.effect(),
    });
    if tool.effect() != Effect::Read {
        operation["parameters"] = json!([{
            "name": IDEMPOTENCY_HEADER,
            "in": "header",
            "required": false,
            "description": "Names this one intended change: a call repeated with the same key, caller and arguments returns the first one's result without running again.",
            "schema": { "type": "string", "minLength": 1, "maxLength": 255 },
        }]);
    }
    if let Some(title) = tool.title() {
        operation["summary"] = title.into();
    }
    if !tool.tags().is_empty() {
        operation["tags"] = json!(tool.tags());
    }
    operation
}

/// `schema` with its `$defs` moved to `schemas`, each as
/// `<tool>.<part>.<definition>`, and its `$ref`s to them rewritten: inside
/// the document, `#/$defs/...` would point at the document's root.
fn moved_definitions(
    tool: &str,
    part: &str,
    schema: &Value,
    schemas: &mut Map<String, Value>,
) -> Value {
    let mut schema = schema.clone();
    let definitions = match schema.as_object_mut() {
        Some(object) => object.remove("$defs"),
        None => None,
    };
    let prefix = format!("{tool}.{part}.");
    rewrite_refs(&mut schema, &prefix);
    if let Some(Value::Object(definitions)) = definitions {
        for (name, mut definition) in definitions {
            rewrite_refs(&mut definition, &prefix);
            schemas.insert(format!("{prefix}{}", component_name(&name)), definition);
        }
    }
    // A schema's own `$schema` says 2020-12, which is OpenAPI 3.1's dialect.
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    schema
}

/// Every `$ref` to `#/$defs/X` in `schema` pointed at the moved `X`.
fn rewrite_refs(schema: &mut Value, prefix: &str) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref")
                && let Some(name) = reference.strip_prefix("#/$defs/")
            {
                *reference = format!("#/components/schemas/{prefix}{}", component_name(name));
            }
            object
                .values_mut()
                .for_each(|value| rewrite_refs(value, prefix));
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rewrite_refs(item, prefix)),
        _ => {}
    }
}

/// `name` within OpenAPI's rule for component names (`[A-Za-z0-9._-]`).
fn component_name(name: &str) -> String {
    name.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                true => c,
                false => '_',
            },
        )
        .collect()
}

/// The schemas every operation's answers share.
fn components() -> Map<String, Value> {
    let mut schemas = Map::new();
    schemas.insert(
        "Error".into(),
        json!({
            "type": "object",
            "properties": {
                "error": { "type": "string", "description": "What went wrong, as a model would be told." },
                "violations": {
                    "type": "array",
                    "description": "Each place the arguments break the schema (422 only).",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": { "type": "string", "description": "A JSON pointer into the arguments." },
                            "message": { "type": "string" },
                        },
                        "required": ["path", "message"],
                    },
                },
            },
            "required": ["error"],
        }),
    );
    schemas.insert(
        "ApprovalRequest".into(),
        json!({
            "type": "object",
            "description": "The call waiting for a person's approval.",
            "properties": {
                "key": { "type": "string" },
                "name": { "type": "string" },
                "arguments": { "description": "The validated arguments, defaults applied." },
                "digest": { "type": "string", "description": "What identifies exactly this call." },
                "id": { "type": "integer", "minimum": 0, "description": "The request's id in the approval ledger." },
                "requested_by": { "type": "string" },
            },
            "required": ["key", "name", "arguments", "digest"],
        }),
    );
    schemas
}

#[cfg(test)]
mod tests {
    use super::moved_definitions;
    use serde_json::{Map, json};

    #[test]
    fn definitions_move_to_the_components_and_refs_follow() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": { "address": { "$ref": "#/$defs/Address" } },
            "$defs": {
                "Address": { "type": "object", "properties": { "next": { "$ref": "#/$defs/Address" } } },
            },
        });
        let mut schemas = Map::new();
        let moved = moved_definitions("ship", "input", &schema, &mut schemas);
        assert_eq!(
            moved,
            json!({
                "type": "object",
                "properties": { "address": { "$ref": "#/components/schemas/ship.input.Address" } },
            })
        );
        assert_eq!(
            schemas["ship.input.Address"]["properties"]["next"]["$ref"],
            "#/components/schemas/ship.input.Address"
        );
    }
}

//! The registry's tools as MCP lists them: each described once per
//! catalog, with its schemas and annotations.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use super::server::Shared;
use crate::catalog::{Catalog, OutputShape, ToolEntry};
use crate::effect::Effect;

/// Every tool of one catalog as MCP describes it, in catalog order.
pub(super) struct Described {
    catalog: Catalog,
    pub(super) tools: Vec<Tool>,
}

impl<C> Shared<C> {
    /// The MCP descriptions of the tools of `catalog`.
    /// Built once per catalog: callers that find it stale wait for the
    /// one that builds it, instead of each building a copy of every
    /// schema (a burst of first lists kept several).
    pub(super) fn described(&self, catalog: &Catalog) -> Arc<Described> {
        let current = |described: Option<Arc<Described>>| {
            described.filter(|described| described.catalog.same_as(catalog))
        };
        if let Some(described) = current(self.described.load_full()) {
            return described;
        }
        let _building = self
            .building
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(described) = current(self.described.load_full()) {
            return described;
        }
        let described = Arc::new(Described {
            catalog: catalog.clone(),
            tools: catalog.iter().map(describe).collect(),
        });
        self.described.store(Some(described.clone()));
        described
    }
}

/// `tools` as MCP lists them.
pub(crate) fn listed(tools: &[&ToolEntry]) -> Vec<Tool> {
    tools.iter().map(|tool| describe(tool)).collect()
}

/// A tool as MCP lists it.
fn describe(entry: &ToolEntry) -> Tool {
    let mut tool = Tool::new(
        entry.name().to_owned(),
        entry.description().to_owned(),
        Arc::new(as_object(entry.input_schema())),
    )
    .with_annotations(annotations(entry));
    if let Some(title) = entry.title() {
        tool = tool.with_title(title.to_owned());
    }
    if let Some(schema) = output_schema(entry) {
        tool = tool.with_raw_output_schema(Arc::new(schema));
    }
    tool
}

fn annotations(entry: &ToolEntry) -> ToolAnnotations {
    let mut annotations = ToolAnnotations::new()
        .read_only(entry.effect() == Effect::Read)
        .idempotent(entry.idempotent())
        .open_world(entry.open_world());
    if entry.effect() != Effect::Read {
        annotations = annotations.destructive(entry.effect() == Effect::Destructive);
    }
    if let Some(title) = entry.title() {
        annotations.title = Some(title.to_owned());
    }
    annotations
}

fn as_object(schema: &Value) -> JsonObject {
    match schema {
        Value::Object(map) => {
            let mut map = map.clone();
            map.remove("$schema");
            map
        }
        // Catalog schemas are always objects; an empty one accepts anything.
        _ => JsonObject::new(),
    }
}

/// MCP output schemas describe an object; any other result is wrapped as
/// `{"result": ...}`, in the schema and in `structuredContent` alike.
/// Content blocks are not structured content, which an output schema
/// would describe.
fn output_schema(entry: &ToolEntry) -> Option<JsonObject> {
    let shape = entry.output_shape();
    let mut schema = match shape {
        OutputShape::Unknown | OutputShape::Contents => return None,
        OutputShape::Object | OutputShape::Text | OutputShape::Other => {
            as_object(entry.output_schema()?)
        }
    };
    if matches!(shape, OutputShape::Text | OutputShape::Other) {
        let mut wrapped = JsonObject::new();
        let defs = schema.remove("$defs");
        schema.remove("title");
        wrapped.insert("type".into(), json!("object"));
        wrapped.insert("properties".into(), json!({ "result": schema }));
        wrapped.insert("required".into(), json!(["result"]));
        if let Some(defs) = defs {
            wrapped.insert("$defs".into(), defs);
        }
        Some(wrapped)
    } else {
        schema.remove("title");
        Some(schema)
    }
}

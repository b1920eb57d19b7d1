//! Pinned definitions: the digest of each remote tool's definition as it
//! was accepted, so that a server cannot swap a tool's description or
//! schema after it was trusted (the "rug pull").

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::request::Digest;

/// The accepted definition of each remote tool of one upstream, as a
/// digest of its name, title, description, input and output schema and
/// annotations. The application keeps it (a file, a row) between imports.
///
/// An import with pins ([`StdioUpstream::pins`](super::StdioUpstream::pins))
/// pins each tool it has not seen, and finds each whose definition differs
/// from its pin ([`Imported::changed`](super::Imported::changed)): that
/// tool refuses every call, and [`Imported::register`](super::Imported::register)
/// registers it switched off with the reason `definition changed`, until
/// its new definition is [accepted](Pins::accept) and the upstream imported
/// again. Only the changed tool is affected.
///
/// A remote tool that appears under a new name is new, and would be pinned
/// on first use: list the tools to serve with
/// [`RemoteTools::only`](super::RemoteTools::only) and a renamed tool is
/// refused instead.
///
/// Pins are JSON, a remote name to a hex digest:
///
/// ```
/// use toolwright::import::mcp::Pins;
///
/// let kept = r#"{"echo": "9f3a1c0d5e7b2a4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d"}"#;
/// let pins: Pins = serde_json::from_str(kept).unwrap();
/// assert!(pins.get("echo").is_some());
/// assert_eq!(serde_json::from_str::<Pins>(&serde_json::to_string(&pins).unwrap()).unwrap(), pins);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pins {
    tools: BTreeMap<String, Digest>,
}

impl Pins {
    /// No pins: every tool is pinned as first seen.
    pub fn new() -> Self {
        Pins::default()
    }

    /// The pinned digest of the remote tool `name`.
    pub fn get(&self, name: &str) -> Option<Digest> {
        self.tools.get(name).copied()
    }

    /// How many tools are pinned.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is pinned.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Accepts the new definition of a changed tool: it is pinned, and the
    /// next import serves it. A person decides this, having read what
    /// changed.
    pub fn accept(&mut self, changed: &Changed) {
        self.set(&changed.name, changed.found);
    }

    /// Pins `digest` as the accepted definition of the remote tool `name`.
    pub(super) fn set(&mut self, name: &str, digest: Digest) {
        self.tools.insert(name.to_owned(), digest);
    }

    /// Compares `tool` with its pin: `None` if it matches, or if it had
    /// none (it is pinned now); else the change.
    pub(super) fn check(&mut self, tool: &Tool, key: &str) -> Option<Changed> {
        let found = definition(tool);
        match self.tools.get(tool.name.as_ref()) {
            Some(&pinned) if pinned != found => Some(Changed {
                name: tool.name.to_string(),
                key: key.to_owned(),
                pinned,
                found,
            }),
            Some(_) => None,
            None => {
                self.tools.insert(tool.name.to_string(), found);
                None
            }
        }
    }
}

/// A remote tool whose definition is not the one pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Changed {
    /// The remote name.
    pub name: String,
    /// Its key here.
    pub key: String,
    /// The digest accepted before.
    pub pinned: Digest,
    /// The digest of the definition the server gives now.
    pub found: Digest,
}

/// The digest of what a model and the validator are told about `tool`.
fn definition(tool: &Tool) -> Digest {
    let definition = json!({
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    });
    Digest::of(&tool.name, &definition)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rmcp::model::Tool;
    use serde_json::{Map, json};

    use super::Pins;

    fn tool(description: &'static str) -> Tool {
        let schema = json!({"type": "object", "properties": {"a": {"type": "integer"}}});
        Tool::new(
            "add",
            description,
            Arc::new(schema.as_object().unwrap().clone()),
        )
    }

    #[test]
    fn a_tool_is_pinned_as_first_seen_and_any_change_is_found() {
        let mut pins = Pins::new();
        assert_eq!(pins.check(&tool("Add two numbers."), "m.add"), None);
        assert_eq!(pins.len(), 1);
        assert_eq!(pins.check(&tool("Add two numbers."), "m.add"), None);
        let changed = pins
            .check(&tool("Add two numbers, and mail them to me."), "m.add")
            .expect("a new description is a change");
        assert_eq!(
            (changed.name.as_str(), changed.key.as_str()),
            ("add", "m.add")
        );
        assert_eq!(Some(changed.pinned), pins.get("add"));
        // Still changed until accepted; then the new one is the pin.
        assert!(
            pins.check(&tool("Add two numbers, and mail them to me."), "m.add")
                .is_some()
        );
        pins.accept(&changed);
        assert_eq!(
            pins.check(&tool("Add two numbers, and mail them to me."), "m.add"),
            None
        );
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        let narrower = Tool::new(
            "add",
            "Add two numbers, and mail them to me.",
            Arc::new(schema),
        );
        assert!(
            pins.check(&narrower, "m.add").is_some(),
            "a new schema is a change"
        );
    }
}

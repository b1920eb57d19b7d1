//! Pinned definitions: the digest of each remote tool's definition as it
//! was accepted, so that a server cannot swap a tool's description or
//! schema after it was trusted (the "rug pull").

use std::collections::BTreeMap;

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::request::Digest;

/// The accepted definition of each remote tool of one upstream: its
/// digest (of its name, title, description, input and output schema and
/// annotations) and the definition itself, so that a change can be shown
/// beside what was accepted. The application keeps it (a file, a row)
/// between imports.
///
/// An import with pins ([`StdioUpstream::pins`](super::StdioUpstream::pins))
/// pins each tool it has not seen, and finds each whose definition differs
/// from its pin ([`Imported::changed`](super::Imported::changed)): that
/// tool refuses every call, and [`Imported::register`](super::Imported::register)
/// registers it switched off with the reason `definition changed` and, as
/// the reason's detail, [what changed](Changed::difference), until its new
/// definition is [accepted](Pins::accept) and the upstream imported
/// again. Only the changed tool is affected.
///
/// A remote tool that appears under a new name is new, and would be pinned
/// on first use: list the tools to serve with
/// [`RemoteTools::only`](super::RemoteTools::only) and a renamed tool is
/// refused instead.
///
/// Pins are JSON, a remote name to its digest and definition. A pin that
/// is a digest alone (as pins were written before they kept definitions)
/// is read too; a change from it cannot show the old definition.
///
/// ```
/// use serde_json::json;
/// use toolwright::import::mcp::Pins;
///
/// let kept = r#"{"echo": "9f3a1c0d5e7b2a4c6e8f0a1b3c5d7e9f1a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d"}"#;
/// let pins: Pins = serde_json::from_str(kept).unwrap();
/// assert!(pins.get("echo").is_some());
/// assert_eq!(pins.definition("echo"), None);
/// assert_eq!(serde_json::from_str::<Pins>(&serde_json::to_string(&pins).unwrap()).unwrap(), pins);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Pins {
    tools: BTreeMap<String, Pin>,
}

/// One tool's pin: its digest, and its definition when known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "Stored")]
struct Pin {
    digest: Digest,
    #[serde(skip_serializing_if = "Option::is_none")]
    definition: Option<Value>,
}

/// A pin as read: with its definition, or a digest alone.
#[derive(Deserialize)]
#[serde(untagged)]
enum Stored {
    Digest(Digest),
    Kept {
        digest: Digest,
        #[serde(default)]
        definition: Option<Value>,
    },
}

impl From<Stored> for Pin {
    fn from(stored: Stored) -> Self {
        match stored {
            Stored::Digest(digest) => Pin {
                digest,
                definition: None,
            },
            Stored::Kept { digest, definition } => Pin { digest, definition },
        }
    }
}

impl Pins {
    /// No pins: every tool is pinned as first seen.
    pub fn new() -> Self {
        Pins::default()
    }

    /// The pinned digest of the remote tool `name`.
    pub fn get(&self, name: &str) -> Option<Digest> {
        self.tools.get(name).map(|pin| pin.digest)
    }

    /// The pinned definition of the remote tool `name` (`title`,
    /// `description`, `inputSchema`, `outputSchema`, `annotations`), when
    /// the pin kept it.
    pub fn definition(&self, name: &str) -> Option<&Value> {
        self.tools.get(name)?.definition.as_ref()
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
        let pin = Pin {
            digest: changed.found,
            definition: Some(changed.found_definition.clone()),
        };
        self.tools.insert(changed.name.clone(), pin);
    }

    /// Compares `tool` with its pin: `None` if it matches, or if it had
    /// none (it is pinned now); else the change.
    pub(super) fn check(&mut self, tool: &Tool, key: &str) -> Option<Changed> {
        let definition = definition(tool);
        let found = Digest::of(&tool.name, &definition);
        match self.tools.get_mut(tool.name.as_ref()) {
            Some(pin) if pin.digest != found => Some(Changed {
                name: tool.name.to_string(),
                key: key.to_owned(),
                pinned: pin.digest,
                found,
                pinned_definition: pin.definition.clone(),
                found_definition: definition,
            }),
            Some(pin) => {
                // A pin read as a digest alone learns its definition.
                pin.definition.get_or_insert(definition);
                None
            }
            None => {
                let pin = Pin {
                    digest: found,
                    definition: Some(definition),
                };
                self.tools.insert(tool.name.to_string(), pin);
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
    /// The definition accepted before, when its pin kept it.
    pub pinned_definition: Option<Value>,
    /// The definition the server gives now.
    pub found_definition: Value,
}

impl Changed {
    /// The fields of the definition that differ (`title`, `description`,
    /// `inputSchema`, `outputSchema`, `annotations`), each as `{"pinned",
    /// "found"}`, what a person reads before accepting the change. With
    /// no pinned definition (a pin kept as a digest alone), every field of
    /// the new one, `pinned` `null`.
    ///
    /// ```
    /// # use toolwright::import::mcp::Changed;
    /// # fn show(changed: &Changed) {
    /// for (field, both) in changed.difference().as_object().unwrap() {
    ///     println!("{field}: {} -> {}", both["pinned"], both["found"]);
    /// }
    /// # }
    /// ```
    pub fn difference(&self) -> Value {
        let empty = Map::new();
        let pinned = self
            .pinned_definition
            .as_ref()
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let found = self.found_definition.as_object().unwrap_or(&empty);
        let mut fields: Vec<&String> = pinned.keys().chain(found.keys()).collect();
        fields.sort();
        fields.dedup();
        let differing = fields.into_iter().filter_map(|field| {
            let (before, after) = (pinned.get(field), found.get(field));
            let unknown = self.pinned_definition.is_none();
            (unknown || before != after).then(|| {
                let both = json!({"pinned": before, "found": after});
                (field.clone(), both)
            })
        });
        Value::Object(differing.collect())
    }
}

/// What a model and the validator are told about `tool`, which its
/// digest covers with its name.
fn definition(tool: &Tool) -> Value {
    json!({
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    })
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
        let change = pins
            .check(&narrower, "m.add")
            .expect("a new schema is a change");
        let difference = change.difference();
        assert_eq!(
            difference.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["inputSchema"],
            "only what differs: {difference}"
        );
        assert_eq!(
            difference["inputSchema"]["found"],
            json!({"type": "object"})
        );
        assert_eq!(
            difference["inputSchema"]["pinned"]["properties"],
            json!({"a": {"type": "integer"}})
        );
    }

    #[test]
    fn pins_keep_definitions_and_read_digests_alone() {
        let mut pins = Pins::new();
        pins.check(&tool("Add two numbers."), "m.add");
        let kept = serde_json::to_value(&pins).unwrap();
        assert_eq!(kept["add"]["definition"]["description"], "Add two numbers.");
        let digest = pins.get("add").unwrap();

        // A pin written as a digest alone: read, and a change from it
        // cannot say what was accepted.
        let old: Pins = serde_json::from_value(json!({"add": digest.to_string()})).unwrap();
        assert_eq!(
            (old.get("add"), old.definition("add")),
            (Some(digest), None)
        );
        let mut learning = old.clone();
        assert_eq!(learning.check(&tool("Add two numbers."), "m.add"), None);
        assert_eq!(learning, pins, "a matching tool fills in its definition");
        let change = old
            .clone()
            .check(&tool("Add two numbers, twice."), "m.add")
            .unwrap();
        assert_eq!(change.pinned_definition, None);
        let difference = change.difference();
        assert_eq!(difference["description"]["pinned"], json!(null));
        assert_eq!(
            difference["description"]["found"],
            "Add two numbers, twice."
        );
        assert!(serde_json::from_value::<Pins>(json!({"add": 7})).is_err());
    }
}

//! What changed between a locked contract and the tools now, and whether
//! it breaks the models and clients that rely on it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value};

use super::lock::{Lock, LockedSchema, LockedTool};
use crate::effect::Effect;

/// How much a [`Difference`] matters, most first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Severity {
    /// What relied on the contract may fail: a tool removed or renamed, a
    /// required argument added, a type narrowed, an effect widened.
    Breaking,
    /// Not breaking, but listed: what a model is told changed (a
    /// description, a title, a hint), or tags that views and rules select by.
    Described,
    /// Only more: a new tool, a new optional argument, a type widened.
    Additive,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad`: a width given (`{:<9}`) lines the list up.
        f.pad(match self {
            Severity::Breaking => "breaking",
            Severity::Described => "described",
            Severity::Additive => "additive",
        })
    }
}

/// One change between a [`Lock`] and the tools now, with why it is as
/// severe as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Difference {
    /// The tool's key (as locked, for one removed or renamed).
    pub key: String,
    /// How much it matters.
    pub severity: Severity,
    /// What changed, and why it is that severe.
    pub reason: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:<9}  {}: {}", self.severity, self.key, self.reason)
    }
}

impl Lock {
    /// What changed from this (locked) contract to `now`, most severe
    /// first, then by key: an empty list when nothing did.
    ///
    /// ```
    /// use toolwright::inspect::{Lock, Severity};
    /// use toolwright::{tool, Catalog};
    ///
    /// mod before {
    ///     use toolwright::tool;
    ///     /// Add two numbers.
    ///     #[tool(key = "math.add", effect = read, authorize = public)]
    ///     pub async fn add(a: i64, b: i64) -> i64 { a + b }
    /// }
    ///
    /// mod after {
    ///     use toolwright::tool;
    ///     /// Add three numbers.
    ///     #[tool(key = "math.add", effect = read, authorize = public)]
    ///     pub async fn add(a: i64, b: i64, c: i64) -> i64 { a + b + c }
    /// }
    ///
    /// let locked = Lock::of(&Catalog::builder().register::<before::AddArgs>().build().unwrap());
    /// let now = Lock::of(&Catalog::builder().register::<after::AddArgs>().build().unwrap());
    /// let changes = locked.compare(&now);
    /// assert_eq!(changes[0].severity, Severity::Breaking);
    /// assert_eq!(changes[0].reason, "a required argument `c` was added: calls without it are refused");
    /// assert_eq!(changes[1].severity, Severity::Described);
    /// assert!(locked.compare(&locked).is_empty());
    /// ```
    pub fn compare(&self, now: &Lock) -> Vec<Difference> {
        let before: BTreeMap<&str, &LockedTool> =
            self.tools.iter().map(|t| (t.key.as_str(), t)).collect();
        let after: BTreeMap<&str, &LockedTool> =
            now.tools.iter().map(|t| (t.key.as_str(), t)).collect();
        let mut differences = Vec::new();
        let mut note = |key: &str, severity, reason: String| {
            differences.push(Difference {
                key: key.to_owned(),
                severity,
                reason,
            });
        };
        for (key, old) in &before {
            match after.get(key) {
                Some(new) => {
                    for (severity, reason) in tool_changes(old, new) {
                        note(key, severity, reason);
                    }
                }
                None => {
                    let reason = match now.tools.iter().find(|t| t.name == old.name) {
                        Some(moved) => format!(
                            "its key became `{}`: rules, views and approvals by key no longer match it",
                            moved.key
                        ),
                        None => format!(
                            "the tool `{}` was removed: a model or client calling it finds nothing",
                            old.name
                        ),
                    };
                    note(key, Severity::Breaking, reason);
                }
            }
        }
        for (key, new) in &after {
            let moved = self.tools.iter().any(|t| t.name == new.name);
            if !before.contains_key(key) && !moved {
                note(
                    key,
                    Severity::Additive,
                    format!("a new tool `{}`", new.name),
                );
            }
        }
        differences.sort_by(|a, b| (a.severity, &a.key).cmp(&(b.severity, &b.key)));
        differences
    }
}

/// What changed in one tool.
fn tool_changes(old: &LockedTool, new: &LockedTool) -> Vec<(Severity, String)> {
    let mut changes = Vec::new();
    if old.name != new.name {
        changes.push((
            Severity::Breaking,
            format!(
                "renamed from `{}` to `{}`: a model calling `{}` finds nothing",
                old.name, new.name, old.name
            ),
        ));
    }
    let rank = |effect: Effect| match effect {
        Effect::Read => 0,
        Effect::Write => 1,
        _ => 2,
    };
    if rank(new.effect) > rank(old.effect) {
        let reason = format!(
            "its effect widened from {} to {}: its calls now need approval",
            old.effect, new.effect
        );
        changes.push((Severity::Breaking, reason));
    } else if rank(new.effect) < rank(old.effect) {
        let reason = format!("its effect narrowed from {} to {}", old.effect, new.effect);
        changes.push((Severity::Additive, reason));
    }
    if old.tags != new.tags {
        let reason = format!(
            "its tags changed from {:?} to {:?}: views and rules that select by tag see it differently",
            old.tags, new.tags
        );
        changes.push((Severity::Described, reason));
    }
    for (what, before, after) in [
        (
            "description",
            Some(&old.description),
            Some(&new.description),
        ),
        ("title", old.title.as_ref(), new.title.as_ref()),
        (
            "search hint",
            old.search_hint.as_ref(),
            new.search_hint.as_ref(),
        ),
    ] {
        if before != after {
            let reason = format!("its {what} changed: what a model is told about it");
            changes.push((Severity::Described, reason));
        }
    }
    if old.input.digest != new.input.digest {
        changes.extend(schema_changes(&old.input, &new.input, Side::Arguments));
    }
    match (&old.output, &new.output) {
        (Some(old), Some(new)) if old.digest != new.digest => {
            changes.extend(schema_changes(old, new, Side::Result));
        }
        (Some(_), None) => changes.push((
            Severity::Breaking,
            "its result no longer has a schema: clients reading it lose their contract".into(),
        )),
        (None, Some(_)) => {
            changes.push((Severity::Additive, "its result now has a schema".into()));
        }
        _ => {}
    }
    changes
}

/// Which schema is compared: a caller writes arguments and reads results,
/// so what breaks one is safe for the other.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Arguments,
    Result,
}

impl Side {
    /// The severity of a change that accepts less, on this side.
    fn narrowed(self) -> Severity {
        match self {
            Side::Arguments => Severity::Breaking,
            Side::Result => Severity::Additive,
        }
    }

    /// The severity of a change that accepts more, on this side.
    fn widened(self) -> Severity {
        match self {
            Side::Arguments => Severity::Additive,
            Side::Result => Severity::Breaking,
        }
    }

    fn field(self) -> &'static str {
        match self {
            Side::Arguments => "argument",
            Side::Result => "result field",
        }
    }
}

/// Keywords that only describe: a change to them is what a model is told.
const DESCRIBING: [&str; 5] = ["description", "title", "examples", "default", "$comment"];

/// Lower bounds: raising one accepts less.
const LOWER: [&str; 5] = [
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
];

/// Upper bounds: lowering one accepts less.
const UPPER: [&str; 5] = [
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
];

/// What changed between two schemas of a tool, on `side`.
fn schema_changes(old: &LockedSchema, new: &LockedSchema, side: Side) -> Vec<(Severity, String)> {
    let (old, new) = (&old.schema, &new.schema);
    let mut changes = Vec::new();
    let empty = Map::new();
    let properties = |schema: &'_ Value| -> Map<String, Value> {
        schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty)
            .clone()
    };
    let required = |schema: &Value| -> BTreeSet<String> {
        schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| {
                names
                    .iter()
                    .filter_map(|n| n.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (old_properties, new_properties) = (properties(old), properties(new));
    let (old_required, new_required) = (required(old), required(new));
    let field = side.field();
    for (name, old_property) in &old_properties {
        let Some(new_property) = new_properties.get(name) else {
            let reason = match side {
                Side::Arguments => {
                    format!("the argument `{name}` was removed: calls that send it are refused")
                }
                Side::Result => {
                    format!(
                        "the result field `{name}` was removed: clients reading it find nothing"
                    )
                }
            };
            changes.push((Severity::Breaking, reason));
            continue;
        };
        match (old_required.contains(name), new_required.contains(name)) {
            (false, true) => changes.push((
                side.narrowed(),
                format!("the {field} `{name}` became required"),
            )),
            (true, false) => changes.push((
                side.widened(),
                format!("the {field} `{name}` became optional"),
            )),
            _ => {}
        }
        changes.extend(value_changes(old_property, new_property, side, name));
    }
    for name in new_properties.keys() {
        if old_properties.contains_key(name) {
            continue;
        }
        let change = match (side, new_required.contains(name)) {
            (Side::Arguments, true) => (
                Severity::Breaking,
                format!("a required argument `{name}` was added: calls without it are refused"),
            ),
            (Side::Arguments, false) => (
                Severity::Additive,
                format!("an optional argument `{name}` was added"),
            ),
            (Side::Result, _) => (
                Severity::Additive,
                format!("a result field `{name}` was added"),
            ),
        };
        changes.push(change);
    }
    let closed = |schema: &Value| schema.get("additionalProperties") == Some(&Value::Bool(false));
    match (closed(old), closed(new)) {
        (false, true) => changes.push((
            side.narrowed(),
            format!("unknown {field}s are no longer accepted"),
        )),
        (true, false) => changes.push((side.widened(), format!("unknown {field}s are accepted"))),
        _ => {}
    }
    // Nested types, compared whole: any change but in their words counts.
    let definitions = |schema: &Value| stripped(schema.get("$defs").unwrap_or(&Value::Null));
    if definitions(old) != definitions(new) {
        changes.push((
            Severity::Breaking,
            format!("a nested type of its {field}s changed: review it"),
        ));
    }
    if changes.is_empty() {
        // Only the words changed (a field's description, say).
        let reason = format!("the descriptions in its {field}s' schema changed");
        changes.push((Severity::Described, reason));
    }
    changes
}

/// What changed between two schemas of one field.
fn value_changes(old: &Value, new: &Value, side: Side, name: &str) -> Vec<(Severity, String)> {
    let mut changes = Vec::new();
    let field = side.field();
    let mut rest = (stripped(old), stripped(new));
    let (old_types, new_types) = (types(old), types(new));
    if old_types != new_types {
        let change = match (&old_types, &new_types) {
            (Some(before), Some(after)) if after.is_subset(before) => side.narrowed(),
            (None, Some(_)) => side.narrowed(),
            (Some(before), Some(after)) if after.is_superset(before) => side.widened(),
            (Some(_), None) => side.widened(),
            _ => Severity::Breaking,
        };
        changes.push((change, format!("the type of the {field} `{name}` changed")));
    }
    if let (Some(before), Some(after)) = (enumerated(old), enumerated(new)) {
        if !before.is_subset(&after) {
            let reason = format!("the {field} `{name}` lost allowed values");
            changes.push((side.narrowed(), reason));
        } else if before != after {
            let reason = format!("the {field} `{name}` gained allowed values");
            changes.push((side.widened(), reason));
        }
    }
    for (bounds, raising_narrows) in [(&LOWER[..], true), (&UPPER[..], false)] {
        for bound in bounds {
            let (before, after) = (number(old, bound), number(new, bound));
            if before == after {
                continue;
            }
            let narrower = match (before, after) {
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (Some(before), Some(after)) => (after > before) == raising_narrows,
                (None, None) => continue,
            };
            let (severity, verb) = match narrower {
                true => (side.narrowed(), "tightened"),
                false => (side.widened(), "loosened"),
            };
            let reason = format!("the {field} `{name}`'s `{bound}` was {verb}");
            changes.push((severity, reason));
        }
    }
    for keyword in ["pattern", "format", "const"] {
        let (before, after) = (old.get(keyword), new.get(keyword));
        if before == after {
            continue;
        }
        let severity = match after {
            None => side.widened(),
            Some(_) => side.narrowed(),
        };
        let reason = format!("the {field} `{name}`'s `{keyword}` changed");
        changes.push((severity, reason));
    }
    // Anything else about the field, the words aside.
    for keyword in ["type", "enum", "pattern", "format", "const"]
        .iter()
        .chain(&LOWER)
        .chain(&UPPER)
    {
        for schema in [&mut rest.0, &mut rest.1] {
            if let Value::Object(object) = schema {
                object.remove(*keyword);
            }
        }
    }
    if rest.0 != rest.1 {
        let reason = format!("the schema of the {field} `{name}` changed: review it");
        changes.push((Severity::Breaking, reason));
    }
    changes
}

/// `schema` without the keywords that only describe, at any depth.
fn stripped(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => Value::Object(
            object
                .iter()
                .filter(|(key, _)| !DESCRIBING.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), stripped(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(stripped).collect()),
        other => other.clone(),
    }
}

/// The types a schema allows (`None`: it says none, so any).
fn types(schema: &Value) -> Option<BTreeSet<String>> {
    match schema.get("type")? {
        Value::String(one) => Some(BTreeSet::from([one.clone()])),
        Value::Array(many) => Some(
            many.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

/// The values a schema's `enum` allows, as text.
fn enumerated(schema: &Value) -> Option<BTreeSet<String>> {
    let values = schema.get("enum")?.as_array()?;
    Some(values.iter().map(Value::to_string).collect())
}

fn number(schema: &Value, keyword: &str) -> Option<f64> {
    schema.get(keyword)?.as_f64()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::lock::{Lock, LockedSchema, LockedTool, digest};
    use super::Severity;
    use crate::effect::Effect;

    fn tool(name: &str, effect: Effect, input: Value) -> LockedTool {
        LockedTool {
            key: "shop.order".into(),
            name: name.into(),
            effect,
            tags: Vec::new(),
            description: digest("Place an order."),
            title: None,
            search_hint: None,
            input: LockedSchema {
                digest: digest(&input.to_string()),
                schema: input,
            },
            output: None,
        }
    }

    fn lock(tools: Vec<LockedTool>) -> Lock {
        Lock { version: 1, tools }
    }

    fn changes(old: LockedTool, new: LockedTool) -> Vec<(Severity, String)> {
        lock(vec![old])
            .compare(&lock(vec![new]))
            .into_iter()
            .map(|d| (d.severity, d.reason))
            .collect()
    }

    fn schema(quantity: Value, required: &[&str]) -> Value {
        json!({
            "type": "object",
            "properties": { "sku": {"type": "string"}, "quantity": quantity },
            "required": required,
            "additionalProperties": false,
        })
    }

    #[test]
    fn each_change_is_classified_with_its_reason() {
        let base = schema(json!({"type": "integer", "minimum": 1}), &["sku"]);
        let old = tool("order", Effect::Write, base.clone());

        let renamed = changes(
            old.clone(),
            tool("place_order", Effect::Write, base.clone()),
        );
        assert_eq!(renamed[0].0, Severity::Breaking);
        assert!(
            renamed[0]
                .1
                .starts_with("renamed from `order` to `place_order`")
        );

        let widened = changes(
            old.clone(),
            tool("order", Effect::Destructive, base.clone()),
        );
        assert_eq!(widened[0].0, Severity::Breaking, "{widened:?}");

        let narrowed = schema(json!({"type": "integer", "minimum": 5}), &["sku"]);
        let tightened = changes(old.clone(), tool("order", Effect::Write, narrowed));
        assert_eq!(
            tightened,
            [(
                Severity::Breaking,
                "the argument `quantity`'s `minimum` was tightened".to_owned()
            )]
        );

        let any_number = schema(json!({"type": ["integer", "null"], "minimum": 1}), &["sku"]);
        let widened = changes(old.clone(), tool("order", Effect::Write, any_number));
        assert_eq!(widened[0].0, Severity::Additive, "{widened:?}");

        let now_required = schema(
            json!({"type": "integer", "minimum": 1}),
            &["sku", "quantity"],
        );
        let required = changes(old.clone(), tool("order", Effect::Write, now_required));
        assert_eq!(required[0].0, Severity::Breaking, "{required:?}");

        let described = schema(
            json!({"type": "integer", "minimum": 1, "description": "How many."}),
            &["sku"],
        );
        let words = changes(old.clone(), tool("order", Effect::Write, described));
        assert_eq!(words[0].0, Severity::Described, "{words:?}");

        // Removed, and a new one.
        let mut other = tool("refund", Effect::Write, base);
        other.key = "shop.refund".into();
        let both = lock(vec![old]).compare(&lock(vec![other]));
        assert_eq!(both[0].severity, Severity::Breaking);
        assert!(both[0].reason.contains("was removed"));
        assert_eq!(both[1].severity, Severity::Additive);
    }
}

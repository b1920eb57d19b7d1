//! The one place arguments pass on their way into an event.

use serde_json::Value;

/// What an event shows in place of a secret value.
///
/// ```
/// assert_eq!(toolwright::observe::REDACTED, "[redacted]");
/// ```
pub const REDACTED: &str = "[redacted]";

/// `arguments` as an event may show them: the value of every top-level
/// property the tool's input `schema` marks `"writeOnly": true` is
/// replaced by [`REDACTED`]. Every event's arguments come through here.
pub(crate) fn redact(schema: &Value, arguments: &Value) -> Value {
    let mut shown = arguments.clone();
    if let (Some(properties), Some(values)) = (
        schema.get("properties").and_then(Value::as_object),
        shown.as_object_mut(),
    ) {
        for (name, property) in properties {
            if property.get("writeOnly") == Some(&Value::Bool(true))
                && let Some(value) = values.get_mut(name)
            {
                *value = Value::from(REDACTED);
            }
        }
    }
    shown
}

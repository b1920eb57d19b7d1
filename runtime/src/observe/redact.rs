//! The one place arguments pass on their way into an event.

use serde_json::Value;

pub use crate::secret::REDACTED;
use crate::secret::is_secret;

/// `arguments` as an event may show them: the value of every top-level
/// property the tool's input `schema` marks `"writeOnly": true` (a
/// `#[secret]` parameter) is replaced by [`REDACTED`]. Every event's
/// arguments come through here.
pub(crate) fn redact(schema: &Value, arguments: &Value) -> Value {
    let mut shown = arguments.clone();
    if let (Some(properties), Some(values)) = (
        schema.get("properties").and_then(Value::as_object),
        shown.as_object_mut(),
    ) {
        for (name, property) in properties {
            if is_secret(property)
                && let Some(value) = values.get_mut(name)
            {
                *value = Value::from(REDACTED);
            }
        }
    }
    shown
}

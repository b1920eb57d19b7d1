//! What `#[secret]` hides. A tool's input schema marks a secret property
//! `"writeOnly": true`; from it each tool keeps, once, the names of its
//! secret properties ([`Secrets`]). A call of a tool that has some shows
//! their values masked wherever arguments are displayed (events, approval
//! requests), and scrubs their text from every error it returns
//! ([`SecretValues`]). A tool without secrets pays one check of an empty
//! list per call.

use std::borrow::Cow;

use serde_json::Value;

/// What toolwright shows in place of a secret value: in call events, the
/// execution log, approval requests, and error texts.
///
/// ```
/// assert_eq!(toolwright::observe::REDACTED, "[redacted]");
/// ```
pub const REDACTED: &str = "[redacted]";

/// The fewest characters a secret value's text must have to be scrubbed
/// from error texts. A shorter one is a word or a letter of other words:
/// scrubbing it would mangle the text (`to[redacted]en` for a secret `k`)
/// and hide nothing. Masking by property, which does not read values, has
/// no such floor.
pub(crate) const MIN_SCRUBBED_CHARS: usize = 4;

/// Whether a property's schema marks it secret.
pub(crate) fn is_secret(property: &Value) -> bool {
    property.get("writeOnly") == Some(&Value::Bool(true))
}

/// The top-level properties a tool's input schema marks `writeOnly`.
#[derive(Debug, Default)]
pub(crate) struct Secrets(Box<[String]>);

impl Secrets {
    /// The secret properties of `schema`.
    pub(crate) fn of(schema: &Value) -> Self {
        let names = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, property)| is_secret(property))
            .map(|(name, _)| name.clone())
            .collect();
        Secrets(names)
    }

    /// Whether the tool has no secret property.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the value at the JSON `pointer` in a call's arguments is,
    /// or is inside, a secret property's.
    pub(crate) fn hold(&self, pointer: &str) -> bool {
        self.0.iter().any(|name| {
            let escaped = name.replace('~', "~0").replace('/', "~1");
            pointer
                .strip_prefix('/')
                .and_then(|rest| rest.strip_prefix(escaped.as_str()))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }

    /// `arguments` with the value of every secret property replaced by
    /// [`REDACTED`].
    pub(crate) fn mask(&self, arguments: &Value) -> Value {
        let mut shown = arguments.clone();
        if let Some(values) = shown.as_object_mut() {
            for name in &self.0 {
                if let Some(value) = values.get_mut(name) {
                    *value = Value::from(REDACTED);
                }
            }
        }
        shown
    }

    /// The text of the secret values among `arguments`, to scrub from what
    /// a call of the tool says.
    pub(crate) fn values(&self, arguments: &Value) -> SecretValues {
        let mut texts = Vec::new();
        if let Some(values) = arguments.as_object() {
            for name in &self.0 {
                if let Some(value) = values.get(name) {
                    texts_of(value, &mut texts);
                }
            }
        }
        // Longest first, so that a secret containing another is scrubbed whole.
        texts.sort_unstable_by_key(|text: &String| std::cmp::Reverse(text.len()));
        texts.dedup();
        SecretValues(texts)
    }
}

/// Every form in which `value` may be quoted: each string in it as it is,
/// as JSON and as Rust's `Debug` escapes it (when they differ), and each
/// number's text, when it has at least [`MIN_SCRUBBED_CHARS`] characters.
/// `true`, `false` and `null` are not scrubbed: as words, they would be
/// scrubbed from every text.
fn texts_of(value: &Value, out: &mut Vec<String>) {
    let meaningful = |text: &str| text.chars().nth(MIN_SCRUBBED_CHARS - 1).is_some();
    match value {
        Value::String(text) if meaningful(text) => {
            out.push(text.clone());
            let json = Value::from(text.as_str()).to_string();
            let json = &json[1..json.len() - 1];
            if json != text {
                out.push(json.to_owned());
            }
            let debug = format!("{text:?}");
            let debug = &debug[1..debug.len() - 1];
            if debug != text && debug != json {
                out.push(debug.to_owned());
            }
        }
        Value::Number(number) => {
            let text = number.to_string();
            if meaningful(&text) {
                out.push(text);
            }
        }
        Value::Array(items) => items.iter().for_each(|item| texts_of(item, out)),
        Value::Object(map) => {
            for (key, item) in map {
                texts_of(&Value::from(key.as_str()), out);
                texts_of(item, out);
            }
        }
        _ => {}
    }
}

/// The texts of one call's secret values.
#[derive(Debug, Default)]
pub(crate) struct SecretValues(Vec<String>);

impl SecretValues {
    /// Whether there is nothing to scrub.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `text` quotes a secret value, in any ASCII case.
    pub(crate) fn leak_in(&self, text: &str) -> bool {
        self.0.iter().any(|secret| find(text, secret).is_some())
    }

    /// `text` with every secret value in it, in any ASCII case (an error
    /// that shouts the token still quotes it), replaced by [`REDACTED`].
    pub(crate) fn scrub<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut text = Cow::Borrowed(text);
        for secret in &self.0 {
            let Some(mut at) = find(&text, secret) else {
                continue;
            };
            let mut scrubbed = String::with_capacity(text.len());
            let mut rest: &str = &text;
            loop {
                scrubbed.push_str(&rest[..at]);
                scrubbed.push_str(REDACTED);
                rest = &rest[at + secret.len()..];
                match find(rest, secret) {
                    Some(next) => at = next,
                    None => break,
                }
            }
            scrubbed.push_str(rest);
            text = Cow::Owned(scrubbed);
        }
        text
    }

    /// Scrubs `text` in place.
    pub(crate) fn scrub_string(&self, text: &mut String) {
        if let Cow::Owned(scrubbed) = self.scrub(text) {
            *text = scrubbed;
        }
    }
}

/// Where `secret` first occurs in `text`, ASCII letters in either case.
/// Other bytes must match exactly, so a match starts and ends on
/// character boundaries, as `secret`'s own first and last bytes do.
fn find(text: &str, secret: &str) -> Option<usize> {
    let secret = secret.as_bytes();
    text.as_bytes()
        .windows(secret.len())
        .position(|window| window.eq_ignore_ascii_case(secret))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn secret_properties_are_masked_and_their_values_scrubbed_in_every_quoting() {
        let schema = json!({"properties": {
            "token": {"type": "string", "writeOnly": true},
            "pin": {"type": "integer", "writeOnly": true},
            "user": {"type": "string"},
        }});
        let secrets = Secrets::of(&schema);
        let arguments = json!({"token": "sk-\"LEAK\"", "pin": 40961, "user": "ann"});
        assert_eq!(
            secrets.mask(&arguments),
            json!({"token": REDACTED, "pin": REDACTED, "user": "ann"})
        );
        let values = secrets.values(&arguments);
        assert_eq!(
            values.scrub("got sk-\"LEAK\" for ann"),
            "got [redacted] for ann"
        );
        assert_eq!(values.scrub(r#"got "sk-\"LEAK\"""#), r#"got "[redacted]""#);
        assert_eq!(values.scrub("pin 40961"), "pin [redacted]");
        assert!(!values.leak_in("ann"));
        assert!(secrets.hold("/token") && secrets.hold("/pin/0"));
        assert!(!secrets.hold("/user") && !secrets.hold("/tokens") && !secrets.hold(""));
        assert!(Secrets::of(&json!({"type": "object"})).is_empty());
    }

    #[test]
    fn short_values_are_left_alone_and_any_ascii_case_is_scrubbed() {
        let schema = json!({"properties": {
            "token": {"type": "string", "writeOnly": true},
            "pin": {"type": "integer", "writeOnly": true},
        }});
        let secrets = Secrets::of(&schema);
        let short = secrets.values(&json!({"token": "k", "pin": 123}));
        assert!(short.is_empty());
        assert_eq!(short.scrub("/token 123"), "/token 123");
        let values = secrets.values(&json!({"token": "sk-Leak-é9"}));
        assert_eq!(
            values.scrub("SK-LEAK-é9 then sk-leak-é9, not sk-leak-É9"),
            "[redacted] then [redacted], not sk-leak-É9"
        );
        assert!(values.leak_in("a SK-lEaK-é9 b"));
    }
}

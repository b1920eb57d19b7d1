//! Step 2: arguments checked against the schema the catalog advertises,
//! then deserialized; every violation reported with its JSON pointer.

use std::cell::Cell;
use std::fmt;
use std::sync::OnceLock;

use jsonschema::ValidationError;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use super::Env;
use crate::args::FailedField;
use crate::error::{CallError, Violation, Violations};
use crate::invocation::Ledgered;
use crate::schema::Enforcement;
use crate::secret::{REDACTED, Secrets};
use crate::tool_str::ToolStr;
use crate::util::excerpt::{Excerpt, Listed, QUOTED_CHARS};

/// How one tool's arguments are checked against its schema.
pub(crate) struct Validation {
    /// Compiled by the first call that needs it (compiling every tool's is
    /// most of what building an executor would cost), or when the executor
    /// is built for a schema that might not compile, so that its error shows
    /// at start-up.
    validator: OnceLock<Result<jsonschema::Validator, String>>,
    /// What the schema says beyond what deserializing enforces.
    enforcement: Enforcement,
    /// The properties it marks secret (`#[secret]`).
    secrets: Secrets,
}

impl Validation {
    /// The validation of `schema`, compiled now if it might not compile.
    pub(crate) fn new(schema: &Value) -> Self {
        let validator = OnceLock::new();
        if !crate::schema::compiles(schema) {
            let compiled = jsonschema::draft202012::new(schema).map_err(|e| e.to_string());
            _ = validator.set(compiled);
        }
        Validation {
            validator,
            enforcement: crate::schema::enforcement(schema),
            secrets: Secrets::of(schema),
        }
    }

    /// The properties the schema marks secret, which a call of the tool
    /// masks and scrubs.
    pub(crate) fn secrets(&self) -> &Secrets {
        &self.secrets
    }

    /// The schema compiler's message, when the schema was compiled and failed.
    pub(crate) fn problem(&self) -> Option<&str> {
        match self.validator.get() {
            Some(Err(message)) => Some(message),
            _ => None,
        }
    }
}

/// The validated arguments of a call as JSON, from the valid JSON its
/// caller `sent`: read again as [`read`] read them, and serialized
/// (`reserialize` does both). For the call's event, so that the call does
/// not pay for it.
pub(super) fn reread(
    sent: &Value,
    reserialize: &mut dyn FnMut(&Value) -> serde_json::Result<Value>,
) -> Value {
    let arguments = reserialize(sent).or_else(|first| {
        let mut normalized = sent.clone();
        match integral_floats_to_integers(&mut normalized) {
            true => reserialize(&normalized),
            false => Err(first),
        }
    });
    // They were read once, so they read again, and serialize.
    arguments.unwrap_or(Value::Null)
}

/// Typed arguments satisfy every structural rule; only a schema with
/// constraints (ranges, lengths, patterns, an `f32`'s bound) needs a check.
pub(super) fn check_typed(
    env: &Env<'_>,
    key: &ToolStr,
    call: &dyn Ledgered,
) -> Result<(), CallError> {
    if env.validation.enforcement == Enforcement::Deserializing {
        return Ok(());
    }
    validate(env, key, call.canonical_arguments())
}

/// Validates `arguments` and deserializes them (`deserialize` stores them
/// when it succeeds, and notes the field whose value failed to read where
/// it is told). Not generic: every tool shares it.
pub(super) fn check(
    env: &Env<'_>,
    key: &ToolStr,
    arguments: &Value,
    deserialize: &mut Deserialize<'_>,
) -> Result<(), CallError> {
    let failed = Cell::new(None);
    let mut deserialize = |arguments: &Value| {
        failed.set(None);
        deserialize(arguments, Some(&failed))
    };
    // Deserializing first is enough when the schema says nothing more
    // (serde also builds a struct from an array; the schema wants an object).
    let fast = arguments.is_object()
        && match env.validation.enforcement {
            Enforcement::Deserializing => true,
            Enforcement::WithinF32 => crate::schema::within_f32(arguments),
            Enforcement::Validator => false,
        };
    let tried = fast.then(|| deserialize(arguments));
    if let Some(Ok(())) = tried {
        return Ok(());
    }
    validate(env, key, arguments)?;
    // Deserialize once: a fast-path failure is already this answer.
    let first = match tried {
        Some(Err(first)) => first,
        _ => match deserialize(arguments) {
            Ok(()) => return Ok(()),
            Err(first) => first,
        },
    };
    // JSON Schema counts `2.0` as an integer but serde does not: retried
    // once with integral floats written as integers, which changes no
    // value's meaning. If it still fails, that failure is the one to report.
    let mut normalized = arguments.clone();
    let error = if integral_floats_to_integers(&mut normalized) {
        match deserialize(&normalized) {
            Ok(()) => return Ok(()),
            Err(error) => error,
        }
    } else {
        first
    };
    // serde's message does not say where; the field whose value failed,
    // noted by the attempt that failed last, does.
    let path = match failed.get() {
        Some(field) => pointer_to(field),
        None => String::new(),
    };
    // A secret's value is not quoted, not even as serde's message may
    // (scrubbing catches the whole value, not a part or a rewording).
    let message = match env.validation.secrets.hold(&path) {
        true => SECRET_UNREAD.to_owned(),
        false => error.to_string(),
    };
    Err(invalid(key, &path, message))
}

/// Every violation of the tool's schema, or none.
pub(super) fn validate(env: &Env<'_>, key: &ToolStr, arguments: &Value) -> Result<(), CallError> {
    let validator = env.validation.validator.get_or_init(|| {
        jsonschema::draft202012::new(env.schema).map_err(|error| {
            // Not expected: a schema compiled late always compiles (see
            // `schema::compiles`). The arguments are refused: they cannot be
            // checked.
            tracing::error!(key = key.as_str(), %error, "the input schema does not compile");
            error.to_string()
        })
    });
    let validator = match validator {
        Ok(validator) => validator,
        Err(error) => {
            let message = format!("the arguments could not be checked: {error}");
            return Err(invalid(key, "", message));
        }
    };
    if validator.is_valid(arguments) {
        return Ok(());
    }
    let secrets = &env.validation.secrets;
    let violations = validator
        .iter_errors(arguments)
        .map(|error| {
            let path = error.instance_path().to_string();
            // A secret value is not quoted at all (a prefix of it would
            // escape the scrubbing of whole values).
            let message = if secrets.hold(&path) {
                error.masked_with(REDACTED).to_string()
            } else {
                describe(&error)
            };
            Violation { path, message }
        })
        .collect();
    Err(CallError::InvalidArguments {
        key: key.clone(),
        violations: Violations(violations),
    })
}

/// What a secret parameter's violation says when its value does not read
/// as its type: serde's message may quote the value.
const SECRET_UNREAD: &str =
    "the value does not read as the parameter's type (the reason is withheld: the value is secret)";

/// What `error` says, quoting the offending value up to a short prefix and
/// at most [`LISTED_ITEMS`](crate::util::excerpt::LISTED_ITEMS) unexpected
/// properties: the caller has the value, and no log or model needs 900 KB
/// of it. (`Violation`'s `Display` bounds what is left, such as a
/// `propertyNames` error that quotes a key.)
fn describe(error: &ValidationError<'_>) -> String {
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            unexpected_properties("Additional", unexpected)
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            unexpected_properties("Unevaluated", unexpected)
        }
        _ => {
            // Usually a few characters: a number, a short string.
            let value = error.instance().to_string();
            let quoted = Excerpt::prefix(&value, QUOTED_CHARS).to_string();
            error.masked_with(quoted).to_string()
        }
    }
}

/// jsonschema's message for unexpected properties, naming the first few.
fn unexpected_properties(which: &str, unexpected: &[String]) -> String {
    let quoted = unexpected.iter().map(String::as_str).map(Quoted);
    let verb = if unexpected.len() == 1 { "was" } else { "were" };
    format!(
        "{which} properties are not allowed ({} {verb} unexpected)",
        Listed::new(quoted, ", ")
    )
}

/// A property name in single quotes, cut to a short prefix.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'", Excerpt::prefix(self.0, QUOTED_CHARS))
    }
}

/// How [`check`] reads a tool's arguments: its `__deserialize`, noting the
/// field whose value failed to read where it is told.
pub(super) type Deserialize<'f> =
    dyn FnMut(&Value, FailedField<'_>) -> Result<(), serde_json::Error> + 'f;

/// The error of arguments that passed their checks but were not kept,
/// which a deserializer that succeeds always does.
pub(super) fn unread(key: &ToolStr) -> CallError {
    invalid(key, "", "the arguments were not read".to_owned())
}

fn invalid(key: &ToolStr, path: &str, message: String) -> CallError {
    CallError::InvalidArguments {
        key: key.clone(),
        violations: Violations(vec![Violation {
            path: path.to_owned(),
            message,
        }]),
    }
}

/// The JSON pointer to a top-level field (`~` and `/` escaped).
fn pointer_to(field: &str) -> String {
    format!("/{}", field.replace('~', "~0").replace('/', "~1"))
}

/// Rewrites every float with no fractional part that fits in 64 bits as an
/// integer; returns whether anything changed.
fn integral_floats_to_integers(value: &mut Value) -> bool {
    match value {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 {
                *value = Value::from(f as i64);
                true
            } else if f.fract() == 0.0 && f >= 0.0 && f < u64::MAX as f64 {
                *value = Value::from(f as u64);
                true
            } else {
                false
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |changed, v| integral_floats_to_integers(v) | changed),
        Value::Object(map) => map
            .values_mut()
            .fold(false, |changed, v| integral_floats_to_integers(v) | changed),
        _ => false,
    }
}

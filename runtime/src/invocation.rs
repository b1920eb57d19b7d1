//! One call of one tool as hooks see it, and the digest that binds an
//! approval to exactly what will run.

use std::fmt;
use std::io::Write;
use std::ops::Deref;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use crate::tool::{Effect, Tool};

/// The validated arguments of one call, with the tool's identity.
///
/// `authorize` and `approve` hooks receive `&Invocation<'_, Args>`; it derefs
/// to the arguments the body will receive, so a hook can decide on them:
///
/// ```
/// use toolwright::{tool, Invocation};
///
/// struct Actor { max_amount: u64 }
///
/// /// Refund an order.
/// #[tool(key = "orders.refund", effect = write, authorize = within_limit, approve = small_refunds)]
/// async fn refund(order_id: u64, amount: u64) -> bool { true }
///
/// async fn within_limit(actor: &Actor, call: &Invocation<'_, RefundArgs>) -> bool {
///     call.amount <= actor.max_amount && call.key() == "orders.refund"
/// }
///
/// async fn small_refunds(_: &Actor, call: &Invocation<'_, RefundArgs>) -> bool {
///     call.amount < 100
/// }
/// ```
pub struct Invocation<'a, A> {
    args: A,
    key: &'a str,
    name: &'a str,
    effect: Effect,
    to_json: fn(&A) -> serde_json::Result<Value>,
    canonical: OnceLock<Box<Canonical>>,
}

struct Canonical {
    arguments: Value,
    digest: Digest,
}

impl<'a, A: Tool> Invocation<'a, A> {
    pub(crate) fn new(args: A) -> Self {
        Invocation {
            args,
            key: A::KEY,
            name: A::NAME,
            effect: A::EFFECT,
            to_json: |args| serde_json::to_value(args),
            canonical: OnceLock::new(),
        }
    }
}

impl<A> Invocation<'_, A> {
    /// The tool's capability key.
    pub fn key(&self) -> &str {
        self.key
    }

    /// The tool's caller-facing name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The tool's declared effect.
    pub fn effect(&self) -> Effect {
        self.effect
    }

    /// The validated arguments.
    pub fn args(&self) -> &A {
        &self.args
    }

    pub(crate) fn into_args(self) -> A {
        self.args
    }
}

impl<A> Invocation<'_, A> {
    /// SHA-256 of the tool key and the canonical JSON of the validated
    /// arguments (defaults applied, object keys sorted).
    ///
    /// The same arguments in any key order give the same digest; any changed
    /// value, or another tool, gives a different one. Computed once per call,
    /// on first use.
    pub fn digest(&self) -> Digest {
        self.canonical().digest
    }

    /// The canonical arguments the digest was computed from.
    pub fn canonical_arguments(&self) -> &Value {
        &self.canonical().arguments
    }

    /// What a person must approve for this exact call to run.
    pub fn approval_request(&self) -> ApprovalRequest {
        ApprovalRequest {
            key: self.key.to_owned(),
            name: self.name.to_owned(),
            arguments: self.canonical_arguments().clone(),
            digest: self.digest(),
        }
    }

    fn canonical(&self) -> &Canonical {
        self.canonical.get_or_init(|| {
            // Arguments that came through validation always serialize; a
            // custom `Serialize` that fails digests as `null`, which no
            // approval of real arguments can match.
            let arguments = (self.to_json)(&self.args).unwrap_or(Value::Null);
            let digest = Digest::of(self.key, &arguments);
            Box::new(Canonical { arguments, digest })
        })
    }
}

impl<A> Deref for Invocation<'_, A> {
    type Target = A;

    fn deref(&self) -> &A {
        &self.args
    }
}

impl<A: fmt::Debug> fmt::Debug for Invocation<'_, A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Invocation")
            .field("key", &self.key)
            .field("name", &self.name)
            .field("effect", &self.effect)
            .field("args", &self.args)
            .finish()
    }
}

/// A SHA-256 digest binding an approval to one tool and its exact arguments.
///
/// It prints and parses as 64 lowercase hex digits.
///
/// ```
/// use serde_json::json;
/// use toolwright::Digest;
///
/// let a = Digest::of("orders.place", &json!({"sku": "A-1", "qty": 2}));
/// let b = Digest::of("orders.place", &json!({"qty": 2, "sku": "A-1"}));
/// let c = Digest::of("orders.place", &json!({"qty": 3, "sku": "A-1"}));
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// assert_eq!(a.to_string().parse::<Digest>().unwrap(), a);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of `key` and the canonical JSON of `arguments`.
    pub fn of(key: &str, arguments: &Value) -> Digest {
        let mut hasher = HashWriter(Sha256::new());
        hasher.0.update(key.as_bytes());
        hasher.0.update([0]);
        write_canonical(&mut hasher, arguments);
        Digest(hasher.0.finalize().into())
    }

    /// The 32 raw bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Writes `value` as JSON with object keys sorted, whatever map the
/// `serde_json` build uses (`preserve_order` keeps insertion order).
fn write_canonical(out: &mut HashWriter, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.0.update(b"{");
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.0.update(b",");
                }
                write_scalar(out, k);
                out.0.update(b":");
                write_canonical(out, v);
            }
            out.0.update(b"}");
        }
        Value::Array(items) => {
            out.0.update(b"[");
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.0.update(b",");
                }
                write_canonical(out, v);
            }
            out.0.update(b"]");
        }
        scalar => write_scalar(out, scalar),
    }
}

fn write_scalar<T: Serialize + ?Sized>(out: &mut HashWriter, value: &T) {
    // Writing a string or a scalar `Value` into a hasher cannot fail.
    let _ = serde_json::to_writer(out, value);
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

/// The text was not 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a digest is 64 hex digits")]
pub struct ParseDigestError;

impl FromStr for Digest {
    type Err = ParseDigestError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bytes = s.as_bytes();
        if bytes.len() != 64 {
            return Err(ParseDigestError);
        }
        let mut out = [0u8; 32];
        for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            let hex = std::str::from_utf8(pair).map_err(|_| ParseDigestError)?;
            *slot = u8::from_str_radix(hex, 16).map_err(|_| ParseDigestError)?;
        }
        Ok(Digest(out))
    }
}

impl Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// What a person must see to approve one call: the tool, its canonical
/// arguments, and the digest an approval is recorded under.
///
/// Returned inside [`crate::CallError::ApprovalRequired`] when an `approve`
/// hook answers [`crate::Verdict::Pending`].
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ApprovalRequest {
    /// The tool's key.
    pub key: String,
    /// The tool's caller-facing name.
    pub name: String,
    /// The validated arguments, defaults applied.
    pub arguments: Value,
    /// The digest that identifies exactly this call.
    pub digest: Digest,
}

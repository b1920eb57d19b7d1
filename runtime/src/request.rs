//! The digest that binds an approval to exactly what will run, and the
//! request a person is asked to approve.

use std::fmt;
use std::io::Write;
use std::str::FromStr;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

/// A SHA-256 digest binding an approval to one tool and its exact arguments.
///
/// It prints, and serializes, as 64 lowercase hex digits, and parses from 64
/// hex digits of either case.
///
/// ```
/// use serde_json::json;
/// use toolwright::approval::Digest;
///
/// let a = Digest::of("orders.place", &json!({"sku": "A-1", "qty": 2}));
/// let b = Digest::of("orders.place", &json!({"qty": 2, "sku": "A-1"}));
/// let c = Digest::of("orders.place", &json!({"qty": 3, "sku": "A-1"}));
/// assert_eq!(a, b);
/// assert_ne!(a, c);
/// assert_eq!(a.to_string().parse::<Digest>().unwrap(), a);
/// assert_eq!(a.to_string().to_uppercase().parse::<Digest>().unwrap(), a);
/// assert_eq!(serde_json::to_value(a).unwrap(), json!(a.to_string()));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest([u8; 32]);

impl Digest {
    /// The digest of `key` and the canonical JSON of `arguments`.
    ///
    /// For the key of a tool and the validated arguments of a call, defaults
    /// included, it is that call's [`Invocation::digest`](crate::Invocation::digest), so an approval can
    /// be given before any model asks:
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::Digest;
    ///
    /// let approved = Digest::of("payments.send", &json!({"to": "ACME", "cents": 1200}));
    /// let asked = Digest::of("payments.send", &json!({"cents": 1200, "to": "ACME"}));
    /// assert_eq!(approved, asked);
    /// // The same arguments for another tool are another call.
    /// let refund = Digest::of("payments.refund", &json!({"to": "ACME", "cents": 1200}));
    /// assert_ne!(approved, refund);
    /// ```
    pub fn of(key: &str, arguments: &Value) -> Digest {
        let mut hasher = HashWriter(Sha256::new());
        hasher.0.update(key.as_bytes());
        hasher.0.update([0]);
        write_canonical(&mut hasher, arguments);
        Digest(hasher.0.finalize().into())
    }

    /// The 32 raw bytes, to store in a binary column, say.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::approval::Digest;
    ///
    /// let digest = Digest::of("payments.send", &json!({"to": "ACME", "cents": 1200}));
    /// let stored: [u8; 32] = *digest.as_bytes();
    /// let hex: String = stored.iter().map(|byte| format!("{byte:02x}")).collect();
    /// assert_eq!(hex, digest.to_string());
    /// ```
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
///
/// ```
/// use toolwright::{approval::{Digest, ParseDigestError}};
///
/// assert_eq!("a1b2".parse::<Digest>(), Err(ParseDigestError));
/// let error = "z".repeat(64).parse::<Digest>().unwrap_err();
/// assert_eq!(error.to_string(), "a digest is 64 hex digits");
/// // Signs are not digits, though `u8::from_str_radix` would take them.
/// assert!("+a".repeat(32).parse::<Digest>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a digest is 64 hex digits")]
pub struct ParseDigestError;

impl FromStr for Digest {
    type Err = ParseDigestError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bytes = s.as_bytes();
        // `from_str_radix` alone would also take a sign (`+a`).
        if bytes.len() != 64 || !bytes.iter().all(u8::is_ascii_hexdigit) {
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
/// hook answers [`crate::executor::Verdict::Pending`].
///
/// ```
/// use serde_json::json;
/// use toolwright::{tool, CallError, Catalog, Container, Executor, approval::{ApprovalRequest, Digest}};
/// use toolwright::{Invocation, executor::Verdict};
///
/// /// Send a payment.
/// #[tool(key = "payments.send", effect = destructive, authorize = public, approve = ask)]
/// async fn send_payment(
///     to: String,
///     cents: u64,
///     #[default = "EUR".to_owned()]
///     currency: String,
/// ) -> bool {
///     true
/// }
///
/// async fn ask(_: &(), _: &Invocation<'_, SendPaymentArgs>) -> Verdict {
///     Verdict::Pending
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<SendPaymentArgs>().build().unwrap();
/// let executor = Executor::new(catalog, Container::default()).unwrap();
/// let error = executor
///     .invoke("send_payment", json!({"to": "ACME", "cents": 1200}), &())
///     .await
///     .unwrap_err();
/// let CallError::ApprovalRequired(request) = error else { panic!("{error}") };
///
/// // What the person approving sees, defaults included.
/// assert_eq!(request.key, "payments.send");
/// assert_eq!(request.arguments, json!({"to": "ACME", "cents": 1200, "currency": "EUR"}));
/// assert_eq!(request.digest, Digest::of(&request.key, &request.arguments));
///
/// // Stored, or sent to a review queue, as JSON.
/// let stored = serde_json::to_string(&request).unwrap();
/// let read_back: ApprovalRequest = serde_json::from_str(&stored).unwrap();
/// assert_eq!(read_back, *request);
/// # }
/// ```
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
    /// Where an approval ledger recorded the request (see
    /// [`Approvals`](crate::approval::Approvals)): its id there, to decide it by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<ApprovalId>,
    /// Who asked, when a ledger recorded the request: only they can use
    /// its approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_by: Option<String>,
}

/// The id an approval ledger gives a request: what a person approves or
/// rejects, and what a consumed approval is settled by.
///
/// It prints, parses and serializes as a plain number.
///
/// ```
/// use toolwright::approval::ApprovalId;
///
/// let id: ApprovalId = "42".parse().unwrap();
/// assert_eq!(id, ApprovalId(42));
/// assert_eq!(id.to_string(), "42");
/// assert_eq!(serde_json::to_string(&id).unwrap(), "42");
/// assert!("forty-two".parse::<ApprovalId>().is_err());
/// ```
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ApprovalId(pub u64);

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl FromStr for ApprovalId {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(ApprovalId)
    }
}

//! A tool's key or name as errors, events and entries hold it: the text in
//! the binary for a `#[tool]`, shared with its tool for one built at run
//! time, so that it is freed with the last thing that names the tool.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::Serialize;

/// A tool's key or name, as a [`CallError`](crate::CallError), an
/// [`observe::CallEvent`](crate::observe::CallEvent) or a
/// [`ToolEntry`](crate::registry::ToolEntry) holds it. It reads as a `&str`.
///
/// A `#[tool]`'s key and name are in the binary: they are held as they
/// are, and a copy costs what copying a `&'static str` costs. A tool built
/// at run time ([`DynamicTool`](crate::registry::DynamicTool)), or served under a
/// namespace, has its own text, shared by every copy and freed with the
/// last: a registry that imports, renames and drops tools keeps nothing of
/// the tools it dropped.
///
/// ```
/// use toolwright::{CallError, registry::ToolStr};
///
/// // The key of a `#[tool]`, or of a tool built at run time.
/// let declared = ToolStr::from_static("orders.refund");
/// let imported = ToolStr::from(format!("{}.{}", "orders", "refund"));
/// assert_eq!(declared, imported);
/// assert_eq!(imported, "orders.refund");
/// assert!(imported.starts_with("orders."), "reads as a `str`");
///
/// let error = CallError::Denied { key: imported };
/// assert!(matches!(&error, CallError::Denied { key } if key == "orders.refund"));
/// assert_eq!(error.to_string(), "not authorized to call `orders.refund`");
/// ```
#[derive(Clone)]
pub struct ToolStr(Repr);

/// Where the text is. Two words, as the `&'static str` it replaced: the
/// shared text sits behind a thin `Arc` (of a `Box<str>`, not an
/// `Arc<str>`, which would be two words itself), so that the errors and
/// results every call returns keep their size.
#[derive(Clone)]
enum Repr {
    /// A `#[tool]`'s: copied, never counted.
    Static(&'static str),
    /// A tool's built at run time: counted, freed with the last copy.
    Shared(Arc<Box<str>>),
}

impl ToolStr {
    /// `text`, which lives as long as the program: a `#[tool]`'s key or
    /// name. Nothing is allocated, then or when it is copied.
    ///
    /// ```
    /// use toolwright::registry::ToolStr;
    ///
    /// const KEY: ToolStr = ToolStr::from_static("orders.get");
    /// assert_eq!(KEY.as_str(), "orders.get");
    /// ```
    pub const fn from_static(text: &'static str) -> Self {
        ToolStr(Repr::Static(text))
    }

    /// The text.
    ///
    /// ```
    /// use toolwright::registry::ToolStr;
    ///
    /// let name = ToolStr::from(String::from("crm_get_order"));
    /// let words: Vec<&str> = name.as_str().split('_').collect();
    /// assert_eq!(words, ["crm", "get", "order"]);
    /// ```
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Static(text) => text,
            Repr::Shared(text) => text,
        }
    }
}

impl From<&'static str> for ToolStr {
    fn from(text: &'static str) -> Self {
        ToolStr::from_static(text)
    }
}

impl From<String> for ToolStr {
    fn from(text: String) -> Self {
        ToolStr(Repr::Shared(Arc::new(text.into_boxed_str())))
    }
}

impl Deref for ToolStr {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for ToolStr {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for ToolStr {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for ToolStr {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for ToolStr {}

impl PartialOrd for ToolStr {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ToolStr {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

/// Hashed as its text, so that a map keyed by `ToolStr` is looked up by `&str`.
impl Hash for ToolStr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialEq<str> for ToolStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ToolStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for ToolStr {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<ToolStr> for str {
    fn eq(&self, other: &ToolStr) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<ToolStr> for &str {
    fn eq(&self, other: &ToolStr) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<ToolStr> for String {
    fn eq(&self, other: &ToolStr) -> bool {
        self == other.as_str()
    }
}

impl fmt::Display for ToolStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// As a `str`'s: quoted.
impl fmt::Debug for ToolStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for ToolStr {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ToolStr;

    #[test]
    fn a_tool_str_is_as_small_as_the_str_it_replaced() {
        assert_eq!(size_of::<ToolStr>(), size_of::<&'static str>());
    }

    #[test]
    fn static_and_shared_texts_compare_hash_and_print_alike() {
        use std::collections::HashSet;

        let declared = ToolStr::from_static("orders.get");
        let built = ToolStr::from("orders.get".to_owned());
        assert_eq!(declared, built);
        assert_eq!(
            format!("{declared:?} {built:>12}"),
            r#""orders.get"   orders.get"#
        );
        let keys: HashSet<ToolStr> = [declared, built].into_iter().collect();
        assert!(keys.contains("orders.get"));
        assert_eq!(keys.len(), 1);
    }

    #[test]
    fn shared_text_is_freed_with_its_last_copy() {
        let built = ToolStr::from("crm.orders.get".to_owned());
        let super::Repr::Shared(text) = &built.0 else {
            panic!("built at run time, so shared");
        };
        let weak = std::sync::Arc::downgrade(text);
        let copy = built.clone();
        drop(built);
        assert_eq!(
            weak.upgrade().as_deref().map(|t| &**t),
            Some("crm.orders.get")
        );
        drop(copy);
        assert!(weak.upgrade().is_none());
    }
}

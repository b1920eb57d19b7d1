//! What an export builds: a tree that borrows every part it copies from the
//! canonical schema and the catalog, written out once, as a `Value` for
//! [`export`](fn@super::export) or as JSON text for
//! [`export_json`](super::export_json).
//!
//! A transform that built `Value`s directly would copy every key and node
//! of every schema it exports, and allocating and freeing those copies is
//! most of an export's time: the text export makes none of them. An
//! export builds, writes and drops one tool's tree at a time.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

/// One node of an exported document.
pub(super) enum Node<'a> {
    /// A part of the canonical schema, unchanged.
    Same(&'a Value),
    /// A string of the catalog's (a tool's name).
    Str(&'a str),
    /// A value the export made.
    Made(Value),
    /// An object.
    Object(Object<'a>),
    /// An array.
    Array(Vec<Node<'a>>),
    /// The keys of a canonical object, in its order, as an array of
    /// strings (strict mode's `required`: every property).
    Keys(&'a Map<String, Value>),
}

impl<'a> Node<'a> {
    /// The string this node is, if it is one.
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Same(value) => value.as_str(),
            Node::Made(value) => value.as_str(),
            Node::Str(s) => Some(s),
            Node::Object(_) | Node::Array(_) | Node::Keys(_) => None,
        }
    }

    /// Whether this node is the string `s`.
    pub(super) fn is_str(&self, s: &str) -> bool {
        self.as_str() == Some(s)
    }

    /// The node's entries, if it is an object made by the export.
    pub(super) fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Node::Object(object) => Some(object),
            _ => None,
        }
    }

    /// The node as an owned `Value`.
    pub(super) fn into_value(self) -> Value {
        match self {
            Node::Same(value) => value.clone(),
            Node::Str(s) => Value::String(s.to_owned()),
            Node::Made(value) => value,
            Node::Object(object) => Value::Object(object.into_map()),
            Node::Array(items) => Value::Array(items.into_iter().map(Node::into_value).collect()),
            Node::Keys(map) => Value::Array(map.keys().cloned().map(Value::String).collect()),
        }
    }
}

impl Serialize for Node<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Same(value) => value.serialize(serializer),
            Node::Str(s) => serializer.serialize_str(s),
            Node::Made(value) => value.serialize(serializer),
            Node::Object(object) => {
                let mut map = serializer.serialize_map(Some(object.0.len()))?;
                for (key, value) in &object.0 {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            Node::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Node::Keys(map) => serializer.collect_seq(map.keys()),
        }
    }
}

/// An object's entries, kept sorted by key (the order of a `serde_json`
/// map), each key once.
#[derive(Default)]
pub(super) struct Object<'a>(Vec<(&'a str, Node<'a>)>);

impl<'a> Object<'a> {
    /// An object of `entries`, in any order; a later entry replaces an
    /// earlier one of the same key.
    pub(super) fn of<const N: usize>(entries: [(&'a str, Node<'a>); N]) -> Self {
        let mut object = Object(Vec::with_capacity(N));
        for (key, node) in entries {
            object.insert(key, node);
        }
        object
    }

    /// Where `key` is.
    ///
    /// An object has a dozen entries at most: comparing for equality, which
    /// looks at the lengths first, beats a binary search's ordering.
    fn position(&self, key: &str) -> Option<usize> {
        self.0.iter().position(|(k, _)| *k == key)
    }

    /// Where `key` is (`Ok`) or would go (`Err`).
    fn find(&self, key: &str) -> Result<usize, usize> {
        match self.0.last() {
            // Most entries arrive in order (copied from a sorted map): past
            // the last key, there is nothing else to compare.
            Some((last, _)) if before(last, key) => Err(self.0.len()),
            _ => {
                let at = self.0.partition_point(|(k, _)| before(k, key));
                match self.0.get(at) {
                    Some((k, _)) if *k == key => Ok(at),
                    _ => Err(at),
                }
            }
        }
    }

    /// Sets `key` to `node`, replacing what it was.
    pub(super) fn insert(&mut self, key: &'a str, node: Node<'a>) {
        match self.find(key) {
            Ok(at) => self.0[at].1 = node,
            Err(at) => self.0.insert(at, (key, node)),
        }
    }

    /// Sets `key` to `node` unless it is set.
    pub(super) fn insert_new(&mut self, key: &'a str, node: Node<'a>) {
        if let Err(at) = self.find(key) {
            self.0.insert(at, (key, node));
        }
    }

    pub(super) fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.position(key).map(|at| &self.0[at].1)
    }

    pub(super) fn remove(&mut self, key: &str) -> Option<Node<'a>> {
        self.position(key).map(|at| self.0.remove(at).1)
    }

    pub(super) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// The entries, in key order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (&'a str, &Node<'a>)> {
        self.0.iter().map(|(k, v)| (*k, v))
    }

    /// The entries, moved out in key order.
    pub(super) fn into_entries(self) -> impl Iterator<Item = (&'a str, Node<'a>)> {
        self.0.into_iter()
    }

    fn into_map(self) -> Map<String, Value> {
        // Not `collect`, which gathers the entries into a `Vec` and sorts
        // them before building the map.
        let mut map = Map::new();
        for (key, node) in self.0 {
            map.insert(key.to_owned(), node.into_value());
        }
        map
    }

    /// An empty object with room for `entries`.
    pub(super) fn with_capacity(entries: usize) -> Self {
        Object(Vec::with_capacity(entries))
    }
}

/// `a < b`, mostly without calling `memcmp`: keywords seldom share their
/// first letter.
fn before(a: &str, b: &str) -> bool {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x < y,
        _ => a < b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_keeps_its_keys_sorted_and_unique_as_a_json_map_does() {
        let canonical = json!({"b": [1, 2]});
        let mut object = Object::of([
            ("c", Node::Made(json!(3))),
            ("a", Node::Str("one")),
            ("c", Node::Made(json!(4))),
        ]);
        object.insert("b", Node::Same(&canonical["b"]));
        object.insert_new("a", Node::Made(json!("ignored")));
        let node = Node::Object(object);
        let text = serde_json::to_string(&node).unwrap();
        assert_eq!(text, r#"{"a":"one","b":[1,2],"c":4}"#);
        assert_eq!(node.into_value(), json!({"a": "one", "b": [1, 2], "c": 4}));
    }
}

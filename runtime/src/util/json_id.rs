//! The `id` of a JSON-RPC message read in pieces, for a line too long to
//! keep: the MCP server answers a request over its limit with it, and an
//! import fails the call whose answer is over its limit.

use rmcp::model::RequestId;

/// The longest id, as JSON text, read from a line over the limit.
const MAX_ID_BYTES: usize = 128;

/// UTF-8 byte order mark, which JSON parsers may ignore (RFC 8259 §8.1).
pub(crate) const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// Finds the `id` member of a JSON object fed to it in pieces, keeping no
/// more of the text than the id itself: how a line over the limit is
/// answered with its id wherever in the line the id is.
///
/// Written by hand: serde_json's streaming deserializer (`from_reader`,
/// skipping the other members as `IgnoredAny`) was the crate's way, but it
/// pulls from a blocking `io::Read`, while the line arrives in async
/// chunks that are dropped as they come.
#[derive(Default)]
pub(crate) struct IdScanner {
    /// `Some` once the scan is over: the id, or `None` if there is none.
    found: Option<Option<RequestId>>,
    /// Where the scan is in the object.
    at: At,
    /// How deep in the object (1: its own members).
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The start of the key being read (enough to tell `id`), or the id.
    text: Vec<u8>,
}

#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the object.
    #[default]
    Start,
    /// Where a member's key starts.
    Key,
    /// In a member's key.
    InKey,
    /// After a key: whether it is `id`.
    Colon { id: bool },
    /// Where a member's value starts: whether it is the id.
    Value { id: bool },
    /// In the id.
    Id,
    /// In or after another member's value.
    Other,
}

impl IdScanner {
    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if self.found.is_some() {
                return;
            }
            self.step(byte);
        }
    }

    /// The id, if the object has one that was found.
    pub(crate) fn id(self) -> Option<RequestId> {
        self.found.flatten()
    }

    fn step(&mut self, byte: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
            }
            match self.at {
                At::InKey if !self.in_string => {
                    let id = self.text == b"id";
                    self.text.clear();
                    self.at = At::Colon { id };
                }
                // Three bytes tell whether the key is `id`.
                At::InKey if self.text.len() < 3 => self.text.push(byte),
                At::Id => {
                    self.keep(byte);
                    if !self.in_string {
                        self.finish();
                    }
                }
                _ => {}
            }
            return;
        }
        if byte.is_ascii_whitespace() {
            if self.at == At::Id {
                self.finish();
            }
            return;
        }
        match self.at {
            At::Start => match byte {
                b'{' => {
                    self.depth = 1;
                    self.at = At::Key;
                }
                _ if BYTE_ORDER_MARK.contains(&byte) => {}
                _ => self.found = Some(None),
            },
            At::Key => match byte {
                b'"' => {
                    self.in_string = true;
                    self.at = At::InKey;
                }
                _ => self.found = Some(None),
            },
            At::InKey => {}
            At::Colon { id } => match byte {
                b':' => self.at = At::Value { id },
                _ => self.found = Some(None),
            },
            At::Value { id: true } => match byte {
                b'{' | b'[' => self.found = Some(None),
                _ => {
                    self.in_string = byte == b'"';
                    self.at = At::Id;
                    self.keep(byte);
                }
            },
            At::Id => match byte {
                b',' | b'}' => self.finish(),
                _ => self.keep(byte),
            },
            At::Value { id: false } | At::Other => {
                self.at = At::Other;
                match byte {
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => {
                        self.depth -= 1;
                        if self.depth == 0 {
                            self.found = Some(None);
                        }
                    }
                    b',' if self.depth == 1 => self.at = At::Key,
                    _ => {}
                }
            }
        }
    }

    /// Keeps a byte of the id, or gives up on one too long to be an id.
    fn keep(&mut self, byte: u8) {
        if self.text.len() == MAX_ID_BYTES {
            self.found = Some(None);
        } else {
            self.text.push(byte);
        }
    }

    fn finish(&mut self) {
        if self.found.is_none() {
            self.found = Some(serde_json::from_slice(&self.text).ok());
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::NumberOrString;

    use super::*;

    fn scan(pieces: &[&str]) -> Option<RequestId> {
        let mut scanner = IdScanner::default();
        for piece in pieces {
            scanner.feed(piece.as_bytes());
        }
        scanner.id()
    }

    #[test]
    fn the_id_is_found_wherever_it_is_in_the_object() {
        let number = Some(NumberOrString::Number(7));
        assert_eq!(scan(&[r#"{"jsonrpc":"2.0","id":7,"method":"x"}"#]), number);
        assert_eq!(scan(&[r#"{"params":{"a":[1,"}"]},"id":7}"#]), number);
        assert_eq!(scan(&["\u{feff}{ \"id\" : 7 \n"]), number);
        assert_eq!(scan(&[r#"{"method":"x","id":"a\"b"#, r#"c"}"#]), {
            Some(NumberOrString::String("a\"bc".into()))
        });
        // Cut anywhere, even inside the id.
        assert_eq!(
            scan(&[r#"{"i"#, r#"d":1"#, "2}"]),
            Some(NumberOrString::Number(12))
        );
    }

    #[test]
    fn only_the_objects_own_id_counts() {
        assert_eq!(scan(&[r#"{"params":{"id":1}}"#]), None);
        assert_eq!(scan(&[r#"{"params":"\"id\":1","x":["id",2]}"#]), None);
        assert_eq!(scan(&[r#"{"idx":1,"xid":2}"#]), None);
        assert_eq!(scan(&[r#"[{"id":1}]"#]), None);
        assert_eq!(scan(&[r#"{"id":{"a":1}}"#]), None);
        assert_eq!(scan(&[r#"{"id":null}"#]), None);
        let long = format!(r#"{{"id":"{}"}}"#, "x".repeat(MAX_ID_BYTES));
        assert_eq!(scan(&[&long]), None);
    }
}

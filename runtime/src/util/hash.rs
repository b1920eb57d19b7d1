//! The hash of the maps looked up on every call: a tool's name in the
//! catalog, a type in a container.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::tool_str::ToolStr;

/// A map looked up on every call, hashed with [`KeyHasher`].
pub(crate) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// A map of tool names looked up on every call by a [`Name`] the caller
/// lends. hashbrown's own map, not std's: std's looks a key up only by
/// what the key `Borrow`s, a `str`, whose comparison is the `memcmp` that
/// [`Name`] avoids; hashbrown's takes any [`Equivalent`](hashbrown::Equivalent).
pub(crate) type NameMap<V> = hashbrown::HashMap<ToolStr, V, BuildHasherDefault<KeyHasher>>;

/// The hash of the per-call lookups (tool names and type ids): the keys
/// are few and chosen by the application, and a caller only ever looks one
/// up (it never inserts), so SipHash's flood resistance buys nothing here.
pub(crate) type KeyHasher = rustc_hash::FxHasher;

/// A tool's name as the key of the catalog's map: hashed as a `str` is,
/// and compared a word at a time in place, where comparing two `str`s
/// calls `memcmp` (a call through the dynamic linker that took as long as
/// hashing the name).
#[derive(Clone, Copy, Eq)]
pub(crate) struct Name<'a>(pub(crate) &'a str);

impl PartialEq for Name<'_> {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let ((a_words, a_rest), (b_words, b_rest)) = (a.as_chunks::<8>(), b.as_chunks::<8>());
        a_words
            .iter()
            .zip(b_words)
            .all(|(x, y)| u64::from_ne_bytes(*x) == u64::from_ne_bytes(*y))
            // The same length, so `tail` tells the rests apart.
            && (a_rest.is_empty() || tail(a_rest) == tail(b_rest))
    }
}

impl Hash for Name<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

/// A name looked up in a [`NameMap`]: compared as two names are (both hash
/// as their `str`).
impl hashbrown::Equivalent<ToolStr> for Name<'_> {
    fn equivalent(&self, key: &ToolStr) -> bool {
        *self == Name(key)
    }
}

/// The last 1 to 7 bytes of a key as one word, with its length in the
/// top byte, read straight from the key with at most two loads. Not
/// copied into a zeroed buffer and read back as a word: the processor
/// cannot forward the buffer's small stores to that wide load and waits
/// for them, which took more time than the rest of the lookup (a tenth
/// of a JSON call's time in `perf`, though no instruction more).
fn tail(rest: &[u8]) -> u64 {
    let n = rest.len();
    let word = match (rest.first_chunk::<4>(), rest.last_chunk::<4>(), rest) {
        // Four to seven bytes: two words of four, overlapping.
        (Some(low), Some(high), _) => {
            u64::from(u32::from_le_bytes(*low)) | u64::from(u32::from_le_bytes(*high)) << 32
        }
        // One to three: the first, middle and last.
        (_, _, [first, .., last]) => {
            u64::from(*first) | u64::from(rest[n / 2]) << 8 | u64::from(*last) << 16
        }
        (_, _, [only]) => u64::from(*only) * 0x01_0101,
        (_, _, []) => 0,
    };
    word.wrapping_add((n as u64) << 56)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, BuildHasherDefault};

    use super::{KeyHasher, KeyMap, Name};

    #[test]
    fn names_of_every_length_are_found_and_others_are_not() {
        let names: Vec<String> = (1..=64)
            .flat_map(|len| ["a", "z", "_"].map(|c| c.repeat(len)))
            .chain((0..1000).map(|i| format!("tool_{i}")))
            .collect();
        let map: KeyMap<Name<'_>, usize> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (Name(name), i))
            .collect();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(map.get(&Name(name)), Some(&i), "{name}");
        }
        let absent = [
            "",
            "b",
            "tool_1000",
            "tool_1\0",
            "aaaaaaaaa_",
            "aaaaaaab",
            "tool_99x",
            "az",
            "aza",
            "aaaaz",
        ];
        for absent in absent {
            assert_eq!(map.get(&Name(absent)), None, "{absent}");
        }
        // The 1,192 names hash apart: no lookup pays for another's key.
        let build = BuildHasherDefault::<KeyHasher>::default();
        let hashes: HashSet<u64> = names.iter().map(|n| build.hash_one(n.as_str())).collect();
        assert_eq!(hashes.len(), names.len());
    }

    #[test]
    fn names_are_equal_only_byte_for_byte() {
        // Every length up to three words, and a difference in each place:
        // the whole words, and every byte of the tail read as a word.
        for len in 1..=24 {
            let name: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(Name(&name) == Name(&name.clone()), "{name}");
            for at in 0..len {
                let mut other = name.clone().into_bytes();
                other[at] = b'_';
                let other = String::from_utf8(other).unwrap();
                assert!(Name(&name) != Name(&other), "{name} and {other}");
            }
            assert!(Name(&name) != Name(&name[..len - 1]), "{name}, shorter");
        }
    }
}

//! The hash of the maps looked up on every call: a tool's name in the
//! catalog, a type in a container.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A map looked up on every call, hashed with [`KeyHasher`].
pub(crate) type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;

/// The hash of the per-call lookups (tool names and type ids), eight bytes
/// at a time, as `rustc-hash` does. The keys are few and chosen by the
/// application, and a caller only ever looks one up (it never inserts), so
/// SipHash's flood resistance buys nothing here; FNV-1a, used before, took
/// a multiplication per byte of the name.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl KeyHasher {
    const SEED: u64 = 0xf135_7aea_2e62_a9c5;

    fn add(&mut self, word: u64) {
        self.0 = self.0.wrapping_add(word).wrapping_mul(Self::SEED);
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut le = [0; 8];
            le.copy_from_slice(word);
            self.add(u64::from_le_bytes(le));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut le = [0; 8];
            le[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(le));
        }
    }

    // `str`'s `Hash` ends with `write_u8(0xff)`, `TypeId`'s is `write_u64`s:
    // one step each, not a slice of one byte.
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    fn finish(&self) -> u64 {
        // A product's high bits mix all of its input; the table indexes by
        // the low bits, so bring them down.
        self.0.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, BuildHasherDefault};

    use super::{KeyHasher, KeyMap};

    #[test]
    fn names_of_every_length_are_found_and_others_are_not() {
        let names: Vec<String> = (1..=64)
            .flat_map(|len| ["a", "z", "_"].map(|c| c.repeat(len)))
            .chain((0..1000).map(|i| format!("tool_{i}")))
            .collect();
        let map: KeyMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(map.get(name.as_str()), Some(&i), "{name}");
        }
        for absent in ["", "b", "tool_1000", "tool_1\0", "aaaaaaaaa_"] {
            assert_eq!(map.get(absent), None, "{absent}");
        }
        // The 1,192 names hash apart: no lookup pays for another's key.
        let build = BuildHasherDefault::<KeyHasher>::default();
        let hashes: HashSet<u64> = names.iter().map(|n| build.hash_one(n.as_str())).collect();
        assert_eq!(hashes.len(), names.len());
    }
}

//! Key ids a fresh fetch of the JWKS did not contain: a token naming one
//! is refused without another fetch until the entry expires.

use std::collections::VecDeque;
use std::time::Instant;

use sha2::{Digest as _, Sha256};

/// At most this many key ids are remembered: the oldest goes first.
const CAPACITY: usize = 64;

/// Key ids known to be unknown, each until some time. Tokens are attacker
/// input: what is kept is a digest of each id, and a bounded number of them.
#[derive(Default)]
pub(super) struct UnknownKids {
    /// Oldest first; all live equally long, so also soonest to expire first.
    entries: VecDeque<([u8; 32], Instant)>,
}

impl UnknownKids {
    /// Whether `kid` was found unknown and its entry has not expired at `now`.
    pub(super) fn contains(&self, kid: &str, now: Instant) -> bool {
        let digest = digest(kid);
        self.entries
            .iter()
            .any(|(known, until)| *known == digest && now < *until)
    }

    /// Remembers `kid` as unknown until `until`, dropping expired entries
    /// and, when full, the oldest one.
    pub(super) fn insert(&mut self, kid: &str, until: Instant, now: Instant) {
        let digest = digest(kid);
        self.entries
            .retain(|(known, expiry)| now < *expiry && *known != digest);
        if self.entries.len() >= CAPACITY {
            self.entries.pop_front();
        }
        self.entries.push_back((digest, until));
    }
}

fn digest(kid: &str) -> [u8; 32] {
    Sha256::digest(kid.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn an_unknown_kid_is_remembered_until_its_entry_expires() {
        let now = Instant::now();
        let mut unknown = UnknownKids::default();
        unknown.insert("made-up", now + Duration::from_secs(60), now);
        assert!(unknown.contains("made-up", now));
        assert!(unknown.contains("made-up", now + Duration::from_secs(59)));
        assert!(!unknown.contains("made-up", now + Duration::from_secs(60)));
        assert!(!unknown.contains("another", now));
    }

    #[test]
    fn at_most_64_kids_are_remembered_the_oldest_forgotten_first() {
        let now = Instant::now();
        let until = now + Duration::from_secs(60);
        let mut unknown = UnknownKids::default();
        for i in 0..1000 {
            unknown.insert(&format!("kid-{i}"), until, now);
        }
        assert_eq!(unknown.entries.len(), CAPACITY);
        assert!(!unknown.contains("kid-935", now));
        assert!(unknown.contains("kid-936", now));
        assert!(unknown.contains("kid-999", now));
    }

    #[test]
    fn expired_entries_are_dropped_when_another_is_remembered() {
        let now = Instant::now();
        let mut unknown = UnknownKids::default();
        unknown.insert("old", now + Duration::from_secs(1), now);
        let later = now + Duration::from_secs(2);
        unknown.insert("new", later + Duration::from_secs(60), later);
        assert_eq!(unknown.entries.len(), 1);
        assert!(unknown.contains("new", later));
    }

    #[test]
    fn a_kid_found_unknown_again_is_remembered_once_with_the_later_expiry() {
        let now = Instant::now();
        let mut unknown = UnknownKids::default();
        unknown.insert("made-up", now + Duration::from_secs(10), now);
        unknown.insert("made-up", now + Duration::from_secs(60), now);
        assert_eq!(unknown.entries.len(), 1);
        assert!(unknown.contains("made-up", now + Duration::from_secs(30)));
    }
}

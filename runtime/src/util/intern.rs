//! Strings kept for the life of the process, once each: the tags of tools
//! built at run time, which `ToolEntry::tags` lends as `&'static str` like
//! those of `#[tool]`. Tags are a vocabulary (a handful of words a policy
//! or a selector names), so this grows with the distinct tags ever used,
//! not with the tools; keys and names, which grow with the tools, are
//! `ToolStr`s, freed with their tool.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

/// `text` as a `&'static str`, stored at most once however often it is asked
/// for: memory grows with the distinct tags ever served, not with how often
/// tools are registered.
pub(crate) fn intern(text: &str) -> &'static str {
    static STRINGS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut strings = STRINGS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    match strings.get(text) {
        Some(&kept) => kept,
        None => {
            let kept: &'static str = Box::leak(text.into());
            strings.insert(kept);
            kept
        }
    }
}

#[cfg(test)]
mod tests {
    use super::intern;

    #[test]
    fn a_string_is_kept_once() {
        let first = intern("crm.orders.get");
        let second = intern(&String::from("crm.orders.get"));
        assert!(std::ptr::eq(first, second));
        assert_eq!(first, "crm.orders.get");
    }
}

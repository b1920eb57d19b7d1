//! The rules for keys, names and tags that `#[tool]` checks at compile
//! time (`macros/src/valid.rs`), for what is named at run time.

/// `^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`
pub(crate) fn is_valid_key(key: &str) -> bool {
    !key.is_empty() && key.split('.').all(is_valid_segment)
}

/// One dot-separated segment of a key (a namespace is one or more).
pub(crate) fn is_valid_segment(segment: &str) -> bool {
    let mut chars = segment.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`: every provider's rule for a tool name.
pub(crate) fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= MAX_NAME_LEN
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// The longest name every provider accepts.
pub(crate) const MAX_NAME_LEN: usize = 64;

/// `^[a-z][a-z0-9_-]{0,31}$`
pub(crate) fn is_valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    tag.len() <= 32
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_names_and_tags_follow_the_macros_rules() {
        assert!(is_valid_key("crm.orders.get_v2"));
        assert!(!is_valid_key("crm..get") && !is_valid_key("Crm.get") && !is_valid_key("2fa"));
        assert!(is_valid_name("get-order_2") && is_valid_name(&"a".repeat(64)));
        assert!(
            !is_valid_name(&"a".repeat(65)) && !is_valid_name("9lives") && !is_valid_name("a.b")
        );
        assert!(is_valid_tag("pii") && is_valid_tag("open-world"));
        assert!(!is_valid_tag("PII") && !is_valid_tag("") && !is_valid_tag(&"a".repeat(33)));
    }
}

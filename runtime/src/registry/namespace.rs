//! Namespaces: a key gains the namespace as leading dot segments; a name
//! gains it as a prefix, within every provider's name rule.

use sha2::{Digest as _, Sha256};

use crate::catalog::ToolEntry;
use crate::tool_str::ToolStr;
use crate::util::names::MAX_NAME_LEN;

/// `tool` served under `namespace` (one or more dot segments): key
/// `namespace.key`, name `namespace_name` (dots as `_`), shortened with a
/// hash suffix when it would be longer than a provider accepts.
pub(super) fn mounted(tool: &ToolEntry, namespace: &str) -> ToolEntry {
    let key = ToolStr::from(format!("{namespace}.{}", tool.key()));
    served_for_key(tool, key)
}

/// `tool` with `namespace.` taken off its key, or `None` when its key is
/// not under `namespace`.
pub(super) fn flattened(tool: &ToolEntry, namespace: &str) -> Option<ToolEntry> {
    let rest = tool.key().strip_prefix(namespace)?.strip_prefix('.')?;
    let (declared_key, _) = tool.declared();
    // Back to the declared key: the declaration's own text, not a copy.
    let key = match rest == declared_key {
        true => declared_key.clone(),
        false => ToolStr::from(rest.to_owned()),
    };
    Some(served_for_key(tool, key))
}

/// The namespace `tool` is served under (`eu` for `eu.orders.get`
/// declared as `orders.get`), if any.
pub(super) fn namespace_of(tool: &ToolEntry) -> Option<&str> {
    namespace_in(tool.key(), &tool.declared().0)
}

/// What `key` adds in front of `declared_key`, without the dot.
fn namespace_in<'k>(key: &'k str, declared_key: &str) -> Option<&'k str> {
    key.strip_suffix(declared_key)?
        .strip_suffix('.')
        .filter(|namespace| !namespace.is_empty())
}

/// `tool` served under `key`: the name is the declared name qualified by
/// whatever namespace `key` adds in front of the declared key.
fn served_for_key(tool: &ToolEntry, key: ToolStr) -> ToolEntry {
    let (declared_key, declared_name) = tool.declared();
    let namespace = namespace_in(&key, declared_key).unwrap_or_default();
    let name = qualified_name(namespace, declared_name);
    tool.served_as(key, name)
}

/// `name` qualified by `namespace`: `crm.eu` and `get` give `crm_eu_get`.
/// A name that would exceed 64 characters keeps its start and ends with
/// `_` and 8 hex digits of the whole name's hash, so that two long names
/// stay apart.
pub(super) fn qualified_name(namespace: &str, name: &ToolStr) -> ToolStr {
    if namespace.is_empty() {
        return name.clone();
    }
    let full = format!("{}_{name}", namespace.replace('.', "_"));
    if full.len() <= MAX_NAME_LEN {
        return ToolStr::from(full);
    }
    // SHA-256: the same name on every machine and in every version.
    let hash = Sha256::digest(full.as_bytes());
    let suffix = format!(
        "_{:02x}{:02x}{:02x}{:02x}",
        hash[0], hash[1], hash[2], hash[3]
    );
    // Names are ASCII (both parts passed the name and key rules).
    let kept = &full[..MAX_NAME_LEN - suffix.len()];
    ToolStr::from(format!("{kept}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::qualified_name;
    use crate::tool_str::ToolStr;

    #[test]
    fn qualified_names_stay_within_every_providers_rule() {
        let name = |text: &str| ToolStr::from(text.to_owned());
        assert_eq!(
            qualified_name("crm.eu", &name("get_order")),
            "crm_eu_get_order"
        );
        assert_eq!(qualified_name("", &name("get_order")), "get_order");
        let long = qualified_name("warehouse", &name(&"a".repeat(60)));
        let other = qualified_name("warehouse", &name(&format!("{}b", "a".repeat(59))));
        assert_eq!((long.len(), other.len()), (64, 64));
        assert!(long.starts_with("warehouse_aaaa"));
        assert_ne!(long, other, "two long names stay apart");
        assert!(crate::util::names::is_valid_name(&long));
    }
}

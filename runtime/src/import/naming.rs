//! The key and name an imported tool is served under: qualified by its
//! namespace, within the rules every provider applies.

use sha2::{Digest as _, Sha256};

use crate::util::names::{MAX_NAME_LEN, is_valid_key, is_valid_name};

/// How many hex digits of the full name's digest end a shortened name.
const SUFFIX: usize = 8;

/// The key and name of remote tool (or operation) `remote` in `namespace`:
/// key `namespace.remote` with the remote name lowercased and every
/// character a key may not hold made `_`; name `namespace_remote` (dots of
/// the namespace made `_`) with the remote name as it is, where the name
/// rule allows it. A name longer than the rule's 64 characters is cut and
/// ends with `_` and 8 hex digits of the full name's digest, so that two
/// long names stay apart and an import names a tool the same way each time.
/// `Err` says why the tool cannot be served.
pub(super) fn qualified(namespace: &str, remote: &str) -> Result<(String, String), String> {
    let mut segment: String = remote
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_') => c,
            _ => '_',
        })
        .collect();
    if !segment.starts_with(|c: char| c.is_ascii_lowercase()) {
        segment.insert(0, 't');
    }
    let key = format!("{namespace}.{segment}");
    let prefix = namespace.replace('.', "_");
    let name: String = remote
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let name = shortened(format!("{prefix}_{name}"));
    if !is_valid_key(&key) {
        return Err(format!("its key `{key}` is not a valid key"));
    }
    if !is_valid_name(&name) {
        return Err(format!("its name `{name}` is not a valid name"));
    }
    Ok((key, name))
}

/// `name`, or when it is longer than the name rule allows, its start and
/// a digest of the whole. `name` is ASCII.
fn shortened(name: String) -> String {
    if name.len() <= MAX_NAME_LEN {
        return name;
    }
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest
        .iter()
        .take(SUFFIX / 2)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{}_{hex}", &name[..MAX_NAME_LEN - SUFFIX - 1])
}

#[cfg(test)]
mod tests {
    use super::qualified;

    #[test]
    fn remote_names_are_qualified_within_the_rules() {
        let pair = |k: &str, n: &str| Ok((k.to_owned(), n.to_owned()));
        assert_eq!(
            qualified("everything", "get-sum"),
            pair("everything.get_sum", "everything_get-sum")
        );
        assert_eq!(
            qualified("gh.work", "Create Issue"),
            pair("gh.work.create_issue", "gh_work_Create_Issue")
        );
        assert_eq!(qualified("x", "9lives"), pair("x.t9lives", "x_9lives"));
    }

    #[test]
    fn long_names_are_cut_and_stay_apart() {
        let (key_a, a) = qualified("x", &format!("{}a", "n".repeat(70))).unwrap();
        let (_, b) = qualified("x", &format!("{}b", "n".repeat(70))).unwrap();
        assert_eq!((a.len(), b.len()), (64, 64));
        assert_ne!(a, b);
        assert!(a.starts_with("x_nnnn"));
        assert_eq!(key_a.len(), 2 + 71, "keys have no length rule");
        // The same long name is cut the same way every time.
        assert_eq!(
            qualified("x", &format!("{}a", "n".repeat(70))).unwrap().1,
            a
        );
    }
}

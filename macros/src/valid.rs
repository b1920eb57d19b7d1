//! Semantic checks on the attribute and the fn together, resolving defaults.

use syn::{Ident, LitBool, LitStr, Path};

use crate::ast::{Kind, ToolFn, unraw};
use crate::attr::{Authorize, Effect, ToolAttr};
use crate::errors::Errors;

/// Everything expansion needs, checked.
pub(crate) struct Spec {
    pub key: String,
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub effect: Effect,
    pub authorize: Option<Path>,
    pub approve: Option<Path>,
    pub idempotent: bool,
    pub open_world: bool,
    pub tags: Vec<String>,
    pub timeout_ms: Option<u64>,
    pub concurrency: Concurrency,
    pub max_result: Option<u32>,
    pub defer: bool,
    pub search_hint: Option<String>,
    pub args: Ident,
}

/// How many calls of the tool may run at once.
#[derive(Clone, Copy)]
pub(crate) enum Concurrency {
    Unlimited,
    Limit(u32),
    Exclusive,
}

/// The name of the generated struct: `args = ...`, or `<CamelName>Args`.
pub(crate) fn args_ident(attr: &ToolAttr, tool: &ToolFn) -> Ident {
    attr.args.clone().unwrap_or_else(|| {
        let camel: String = unraw(&tool.ident)
            .split('_')
            .filter(|part| !part.is_empty())
            .map(|part| {
                let mut chars = part.chars();
                chars
                    .next()
                    .map(|first| first.to_uppercase().chain(chars).collect::<String>())
                    .unwrap_or_default()
            })
            .collect();
        Ident::new(&format!("{camel}Args"), tool.ident.span())
    })
}

pub(crate) fn check(
    attr: ToolAttr,
    tool: &ToolFn,
    args: Ident,
    errors: &mut Errors,
) -> Option<Spec> {
    let key = match &attr.key {
        Some(key) if !is_valid_key(&key.value()) => {
            let message = "a tool key is dot-separated lowercase segments (letters, digits and `_`, each starting with a letter)";
            match key_suggestion(&key.value()) {
                Some(meant) => errors.spanned(key, format!("{message}; write \"{meant}\"")),
                None => errors.spanned(key, format!("{message}, such as \"products.get\"")),
            }
            None
        }
        Some(key) => Some(key.value()),
        None => {
            if !attr.wrote("key") {
                attr.missing(
                    errors,
                    "missing `key`: add a stable capability key such as `key = \"products.get\"`",
                );
            }
            None
        }
    };

    let name = match &attr.name {
        Some(name) if !is_valid_name(&name.value()) => {
            let value = name.value();
            let length = value.chars().count();
            if length > 64 {
                errors.spanned(
                    name,
                    format!("a tool name has at most 64 characters (every model provider's rule); this one has {length}, shorten it"),
                );
            } else {
                errors.spanned(
                    name,
                    format!(
                        "a tool name has only letters, digits, `_` and `-`, and starts with a letter or `_` (every model provider's rule); write \"{}\"",
                        name_suggestion(&value)
                    ),
                );
            }
            None
        }
        Some(name) => Some(name.value()),
        // A `name` whose value was refused has its own error.
        None if attr.wrote("name") => None,
        None => {
            let name = unraw(&tool.ident);
            match default_name_mistake(&name) {
                Some(mistake) => {
                    errors.spanned(&tool.ident, mistake);
                    None
                }
                None => Some(name),
            }
        }
    };

    let description = match (&attr.description, &tool.docs, &tool.unread_doc) {
        // Reading only the literal lines would lose the rest silently.
        (None, _, Some(doc)) => {
            errors.spanned(
                doc,
                "`#[tool]` reads the doc comment as the tool's description before macros such as `include_str!` expand, so it cannot read this one; write the description as `description = \"...\"` (the doc attribute stays for rustdoc) or as `///` lines",
            );
            None
        }
        (Some(text), _, _) if text.value().trim().is_empty() => {
            errors.spanned(text, "the description is empty; say what the tool does");
            None
        }
        (Some(text), _, _) => Some(text.value().trim().to_owned()),
        (None, Some((docs, span)), None) if docs.is_empty() => {
            errors.at(*span, "the doc comment is empty; say what the tool does");
            None
        }
        (None, Some((docs, _)), None) => Some(docs.clone()),
        (None, None, None) => {
            errors.spanned(
                &tool.ident,
                "missing description: add a doc comment (`/// ...`) or `description = \"...\"`; models read it to choose the tool",
            );
            None
        }
    };

    let effect = match attr.effect {
        Some((effect, _)) => Some(effect),
        None => {
            if !attr.wrote("effect") {
                attr.missing(
                    errors,
                    "missing `effect`: declare `effect = read`, `effect = write` or `effect = destructive`",
                );
            }
            None
        }
    };

    let authorize = match attr.authorize {
        Some(Authorize::Public) => Some(None),
        Some(Authorize::Hook(path)) => Some(Some(path)),
        None => {
            if !attr.wrote("authorize") {
                attr.missing(
                    errors,
                    "missing `authorize`: name a hook such as `authorize = can_read`, or write `authorize = public` for a tool open to every caller",
                );
            }
            None
        }
    };

    if let Some((effect, span)) = attr.effect {
        match (effect, &attr.approve) {
            (Effect::Write | Effect::Destructive, None) => errors.at(
                span,
                format!(
                    "a `{}` tool needs `approve = hook`: an async fn that approves the exact arguments before every call",
                    effect.as_str()
                ),
            ),
            (Effect::Read, Some(path)) => errors.spanned(
                path,
                "`approve` is only called for `write` and `destructive` tools; remove it or change the effect",
            ),
            _ => {}
        }
    }

    let tags = check_tags(attr.tags.as_deref().unwrap_or_default(), errors);

    let exclusive = attr.exclusive.as_ref().filter(|flag| flag.value);
    let concurrency = match (attr.concurrency, exclusive) {
        (Some(_), Some(flag)) => {
            errors.spanned(
                flag,
                "a tool is either `exclusive` (it runs alone) or limited by `concurrency`, not both; remove one",
            );
            None
        }
        (Some((n, _)), None) => Some(Concurrency::Limit(n)),
        (None, Some(_)) => Some(Concurrency::Exclusive),
        // A `concurrency` whose value was refused has its own error.
        (None, None) => Some(Concurrency::Unlimited),
    };

    check_field_names(tool, errors);

    if let Some(title) = &attr.title
        && title.value().trim().is_empty()
    {
        errors.spanned(title, "the title is empty; remove it or fill it in");
    }

    if let Some(hint) = &attr.search_hint
        && hint.value().trim().is_empty()
    {
        errors.spanned(hint, "the search hint is empty; remove it or fill it in");
    }

    Some(Spec {
        key: key?,
        name: name?,
        title: attr.title.map(|t| t.value()),
        description: description?,
        effect: effect?,
        authorize: authorize?,
        approve: attr.approve,
        idempotent: flag(attr.idempotent).unwrap_or(effect? == Effect::Read),
        open_world: flag(attr.open_world).unwrap_or(false),
        tags: tags?,
        timeout_ms: attr.timeout.map(|(ms, _)| ms),
        concurrency: concurrency?,
        max_result: attr.max_result,
        defer: flag(attr.defer).unwrap_or(false),
        search_hint: attr.search_hint.map(|h| h.value()),
        args,
    })
}

fn flag(value: Option<LitBool>) -> Option<bool> {
    value.map(|b| b.value)
}

/// The tags in the order written, or `None` when one breaks the tag rule
/// or repeats another (each reported on its literal).
fn check_tags(tags: &[LitStr], errors: &mut Errors) -> Option<Vec<String>> {
    const RULE: &str = "a tag is a lowercase word of at most 32 characters: a letter `a`-`z`, then letters `a`-`z`, digits, `_` or `-`";
    let mut checked: Vec<String> = Vec::new();
    let mut valid = true;
    for tag in tags {
        let value = tag.value();
        let length = value.chars().count();
        let mistake = if value.is_empty() {
            Some(format!(
                "{RULE}; this one is empty: write one such as \"pii\", or remove it"
            ))
        } else if !is_valid_tag(&value) {
            let meant = tag_suggestion(&value);
            Some(match meant.filter(|meant| meant.len() <= MAX_TAG_LEN) {
                Some(meant) => format!("{RULE}; write \"{meant}\""),
                None => format!("{RULE}, such as \"pii\""),
            })
        } else if length > MAX_TAG_LEN {
            Some(format!("{RULE}; this one has {length}, shorten it"))
        } else if checked.contains(&value) {
            Some(format!("the tag \"{value}\" is given twice; keep one"))
        } else {
            None
        };
        match mistake {
            Some(message) => {
                errors.spanned(tag, message);
                valid = false;
            }
            None => checked.push(value),
        }
    }
    valid.then_some(checked)
}

/// Two inputs with one field name, or an input renamed to the name of an
/// injected or context parameter, would make the schema lie. The error is
/// on the later of the two, at its `#[rename]` if it has one.
fn check_field_names(tool: &ToolFn, errors: &mut Errors) {
    for (i, param) in tool.params.iter().enumerate() {
        let name = param.wire_name();
        let Some(other) = tool.params[..i].iter().find(|other| {
            other.wire_name() == name
                && (matches!(param.kind, Kind::Input(_)) || matches!(other.kind, Kind::Input(_)))
        }) else {
            continue;
        };
        let (input, not_input) = match (&param.kind, &other.kind) {
            (Kind::Input(_), Kind::Input(_)) => {
                errors.at(
                    field_name_span(param),
                    format!("two inputs are named `{name}`; rename one with `#[rename = \"...\"]`"),
                );
                continue;
            }
            (Kind::Input(_), _) => (param, other),
            _ => (other, param),
        };
        let what = match not_input.kind {
            Kind::Context => "context",
            _ => "injected",
        };
        errors.at(
            field_name_span(input),
            format!(
                "the input `{name}` has the name of the {what} parameter `{}`, which callers never supply; rename the input with `#[rename = \"...\"]`",
                unraw(&not_input.ident)
            ),
        );
    }
}

/// Where a field's name was written: its `#[rename]` value, or the parameter.
fn field_name_span(param: &crate::ast::Param) -> proc_macro2::Span {
    match &param.kind {
        Kind::Input(crate::ast::Input {
            rename: Some(rename),
            ..
        }) => rename.span(),
        _ => param.ident.span(),
    }
}

/// `^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`
fn is_valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.split('.').all(|segment| {
            let mut chars = segment.chars();
            chars.next().is_some_and(|c| c.is_ascii_lowercase())
                && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// The longest tag: room for a word or two, short enough for a filter list.
const MAX_TAG_LEN: usize = 32;

/// `^[a-z][a-z0-9_-]*$`, the length checked apart.
fn is_valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
}

/// A valid tag close to an invalid one: lowercased, spaces and other
/// characters as `_`, or `None` when it does not start with a letter.
fn tag_suggestion(tag: &str) -> Option<String> {
    let meant: String = tag
        .trim()
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '_',
        })
        .collect();
    is_valid_tag(&meant).then_some(meant)
}

/// `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`
fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    name.len() <= 64
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// What is wrong with the fn's name (unraw'd) as the tool's name, and the
/// fix: an identifier can break the rule only by its length or by letters
/// that are not ASCII.
fn default_name_mistake(name: &str) -> Option<String> {
    let length = name.chars().count();
    if length > 64 {
        Some(format!(
            "the tool name `{name}` (from the fn's name) has {length} characters, more than the 64 every model provider allows; give a shorter one with `name = \"...\"`"
        ))
    } else if !is_valid_name(name) {
        Some(format!(
            "the tool name `{name}` (from the fn's name) is not ASCII, and every model provider takes only ASCII letters, digits, `_` and `-`; give an ASCII one with `name = \"...\"`"
        ))
    } else {
        None
    }
}

/// A valid key close to an invalid one: lowercased, empty segments dropped.
fn key_suggestion(key: &str) -> Option<String> {
    let meant = key
        .split('.')
        .filter(|segment| !segment.is_empty())
        .map(|segment| {
            segment
                .chars()
                .map(|c| match c.to_ascii_lowercase() {
                    c @ ('a'..='z' | '0'..='9' | '_') => c,
                    _ => '_',
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join(".");
    is_valid_key(&meant).then_some(meant)
}

/// A valid name close to an invalid one of at most 64 characters.
fn name_suggestion(name: &str) -> String {
    let mut meant: String = name
        .trim()
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    if !meant.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        meant.insert(0, '_');
    }
    meant.truncate(64);
    meant
}

#[cfg(test)]
mod tests {
    use syn::LitStr;

    use super::check_tags;
    use crate::errors::Errors;

    /// The tags `check_tags` accepts of `values`, and how many it refused.
    fn checked(values: &[&str]) -> (Option<Vec<String>>, usize) {
        let literals: Vec<LitStr> = values
            .iter()
            .map(|v| LitStr::new(v, proc_macro2::Span::call_site()))
            .collect();
        let mut errors = Errors::default();
        let tags = check_tags(&literals, &mut errors);
        let refused = errors
            .finish()
            .map_or(0, |e| e.to_string().matches("compile_error").count());
        (tags, refused)
    }

    #[test]
    fn a_tag_is_a_lowercase_word_of_at_most_32_characters() {
        let longest = "a".repeat(32);
        let (tags, refused) = checked(&["pii", "crm-v2", "eu_only", "a9", &longest]);
        assert_eq!(refused, 0);
        assert_eq!(tags.unwrap(), ["pii", "crm-v2", "eu_only", "a9", &longest]);

        let too_long = "a".repeat(33);
        for bad in ["", "Pii", "9a", "-a", "_a", "a b", "a.b", "é", &too_long] {
            assert_eq!(checked(&[bad]), (None, 1), "{bad:?}");
        }
    }

    #[test]
    fn every_refused_tag_is_reported() {
        assert_eq!(checked(&["pii", "PII", "", "pii", "pii"]), (None, 4));
    }
}

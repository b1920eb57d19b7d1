//! Semantic checks on the attribute and the fn together, resolving defaults.

use syn::{Ident, LitBool, Path};

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
    pub timeout_ms: Option<u64>,
    pub args: Ident,
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

    check_field_names(tool, errors);

    if let Some(title) = &attr.title
        && title.value().trim().is_empty()
    {
        errors.spanned(title, "the title is empty; remove it or fill it in");
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
        timeout_ms: attr.timeout.map(|(ms, _)| ms),
        args,
    })
}

fn flag(value: Option<LitBool>) -> Option<bool> {
    value.map(|b| b.value)
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

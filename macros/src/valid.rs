//! Semantic checks on the attribute and the fn together, resolving defaults.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::{Ident, LitBool, Path};

use crate::ast::{Kind, ToolFn, unraw};
use crate::attr::{Authorize, Effect, ToolAttr};

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
    errors: &mut Accumulator,
) -> Option<Spec> {
    let call_site = Span::call_site();

    let key = match &attr.key {
        Some(key) if !is_valid_key(&key.value()) => {
            errors.push(
                darling::Error::custom(
                    "a tool key is dot-separated lowercase segments, such as \"products.get\" (letters, digits and `_`, each segment starting with a letter)",
                )
                .with_span(key),
            );
            None
        }
        Some(key) => Some(key.value()),
        None => {
            errors.push(
                darling::Error::custom(
                    "missing `key`: add a stable capability key such as `key = \"products.get\"`",
                )
                .with_span(&call_site),
            );
            None
        }
    };

    let name = match &attr.name {
        Some(name) if !is_valid_name(&name.value()) => {
            errors.push(
                darling::Error::custom(
                    "a tool name must match ^[A-Za-z_][A-Za-z0-9_-]{0,63}$ (every model provider's rule)",
                )
                .with_span(name),
            );
            None
        }
        Some(name) => Some(name.value()),
        None => Some(unraw(&tool.ident)),
    };

    let description = match (&attr.description, &tool.docs) {
        (Some(text), _) if text.value().trim().is_empty() => {
            errors.push(
                darling::Error::custom("the description is empty; say what the tool does")
                    .with_span(text),
            );
            None
        }
        (Some(text), _) => Some(text.value().trim().to_owned()),
        (None, Some((docs, span))) if docs.is_empty() => {
            errors.push(
                darling::Error::custom("the doc comment is empty; say what the tool does")
                    .with_span(span),
            );
            None
        }
        (None, Some((docs, _))) => Some(docs.clone()),
        (None, None) => {
            errors.push(
                darling::Error::custom(
                    "missing description: add a doc comment (`/// ...`) or `description = \"...\"`; models read it to choose the tool",
                )
                .with_span(&tool.ident),
            );
            None
        }
    };

    let effect = match attr.effect {
        Some((effect, _)) => Some(effect),
        None => {
            errors.push(
                darling::Error::custom(
                    "missing `effect`: declare `effect = read`, `effect = write` or `effect = destructive`",
                )
                .with_span(&call_site),
            );
            None
        }
    };

    let authorize = match attr.authorize {
        Some(Authorize::Public) => Some(None),
        Some(Authorize::Hook(path)) => Some(Some(path)),
        None => {
            errors.push(
                darling::Error::custom(
                    "missing `authorize`: name a hook such as `authorize = can_read`, or write `authorize = public` for a tool open to every caller",
                )
                .with_span(&call_site),
            );
            None
        }
    };

    if let Some((effect, span)) = attr.effect {
        match (effect, &attr.approve) {
            (Effect::Write | Effect::Destructive, None) => errors.push(
                darling::Error::custom(
                    "a `write` or `destructive` tool needs `approve = hook`: an async fn that approves the exact arguments",
                )
                .with_span(&span),
            ),
            (Effect::Read, Some(path)) => errors.push(
                darling::Error::custom(
                    "`approve` is only called for `write` and `destructive` tools; remove it or change the effect",
                )
                .with_span(path),
            ),
            _ => {}
        }
    }

    check_field_names(tool, errors);

    if let Some(title) = &attr.title
        && title.value().trim().is_empty()
    {
        errors.push(darling::Error::custom("the title is empty; remove it or fill it in").with_span(title));
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
/// injected or context parameter, would make the schema lie.
fn check_field_names(tool: &ToolFn, errors: &mut Accumulator) {
    for (i, param) in tool.params.iter().enumerate() {
        let Kind::Input(input) = &param.kind else {
            continue;
        };
        let name = param.wire_name();
        for other in &tool.params[..i] {
            if other.wire_name() != name {
                continue;
            }
            let span = input
                .rename
                .as_ref()
                .map(|r| r.span())
                .unwrap_or_else(|| param.ident.span());
            let message = match other.kind {
                Kind::Input(_) => format!(
                    "two inputs are named `{name}`; rename one with `#[rename = \"...\"]`"
                ),
                Kind::Inject | Kind::Context => format!(
                    "the input `{name}` collides with the injected parameter `{name}`, which callers can never supply; rename one of them"
                ),
            };
            errors.push(darling::Error::custom(message).with_span(&span));
        }
        for other in &tool.params[i + 1..] {
            if matches!(other.kind, Kind::Inject | Kind::Context) && other.wire_name() == name {
                let span = input
                    .rename
                    .as_ref()
                    .map(|r| r.span())
                    .unwrap_or_else(|| param.ident.span());
                errors.push(
                    darling::Error::custom(format!(
                        "the input `{name}` collides with the injected parameter `{name}`, which callers can never supply; rename one of them"
                    ))
                    .with_span(&span),
                );
            }
        }
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

//! Parsing `#[tool(...)]`: every key/value, each mistake recorded and the
//! parse carried on so that all of them are reported in one build.

use darling::error::Accumulator;
use proc_macro2::{Span, TokenStream};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitBool, LitStr, Meta, Path, Token};

/// The keys `#[tool]` understands, for did-you-mean suggestions.
pub(crate) const KEYS: &[&str] = &[
    "key",
    "name",
    "title",
    "description",
    "effect",
    "authorize",
    "approve",
    "idempotent",
    "open_world",
    "timeout",
    "args",
];

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    Read,
    Write,
    Destructive,
}

pub(crate) enum Authorize {
    Public,
    Hook(Path),
}

/// The attribute's values, each with the span of what the user wrote.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub key: Option<LitStr>,
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub effect: Option<(Effect, Span)>,
    pub authorize: Option<Authorize>,
    pub approve: Option<Path>,
    pub idempotent: Option<LitBool>,
    pub open_world: Option<LitBool>,
    pub timeout: Option<(u64, Span)>,
    pub args: Option<syn::Ident>,
}

impl ToolAttr {
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Accumulator) -> ToolAttr {
        let mut attr = ToolAttr::default();
        let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
            Ok(metas) => metas,
            Err(error) => {
                errors.push(error.into());
                return attr;
            }
        };
        let mut seen: Vec<String> = Vec::new();
        for meta in metas {
            let path = meta.path();
            let Some(ident) = path.get_ident() else {
                errors.push(
                    darling::Error::custom("expected a key such as `key`, `effect` or `authorize`")
                        .with_span(path),
                );
                continue;
            };
            let key = ident.to_string();
            if seen.contains(&key) {
                errors.push(
                    darling::Error::custom(format!("`{key}` is given twice; keep one"))
                        .with_span(ident),
                );
                continue;
            }
            seen.push(key.clone());
            if !KEYS.contains(&key.as_str()) {
                errors.push(darling::Error::unknown_field_with_alts(&key, KEYS).with_span(ident));
                continue;
            }
            let value = match &meta {
                Meta::NameValue(nv) => &nv.value,
                Meta::Path(_) if key == "idempotent" || key == "open_world" => {
                    let flag = LitBool::new(true, ident.span());
                    attr.set_flag(&key, flag);
                    continue;
                }
                _ => {
                    errors.push(
                        darling::Error::custom(format!("write `{key} = ...`")).with_span(&meta),
                    );
                    continue;
                }
            };
            match key.as_str() {
                "key" => attr.key = errors.handle(string(value, &key)),
                "name" => attr.name = errors.handle(string(value, &key)),
                "title" => attr.title = errors.handle(string(value, &key)),
                "description" => attr.description = errors.handle(string(value, &key)),
                "effect" => attr.effect = errors.handle(effect(value)),
                "authorize" => {
                    attr.authorize = errors.handle(path_value(value, &key)).map(|p| {
                        if p.is_ident("public") {
                            Authorize::Public
                        } else {
                            Authorize::Hook(p)
                        }
                    })
                }
                "approve" => attr.approve = errors.handle(path_value(value, &key)),
                "idempotent" | "open_world" => {
                    if let Some(flag) = errors.handle(boolean(value, &key)) {
                        attr.set_flag(&key, flag);
                    }
                }
                "timeout" => attr.timeout = errors.handle(timeout(value)),
                "args" => {
                    attr.args = errors.handle(path_value(value, &key).and_then(|p| {
                        p.get_ident().cloned().ok_or_else(|| {
                            darling::Error::custom("`args` is a type name such as `FindArgs`")
                                .with_span(&p)
                        })
                    }))
                }
                _ => unreachable!("every key in KEYS is matched"),
            }
        }
        attr
    }

    fn set_flag(&mut self, key: &str, flag: LitBool) {
        if key == "idempotent" {
            self.idempotent = Some(flag);
        } else {
            self.open_world = Some(flag);
        }
    }
}

fn string(value: &Expr, key: &str) -> darling::Result<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        _ => Err(darling::Error::custom(format!("`{key}` takes a string: `{key} = \"...\"`"))
            .with_span(value)),
    }
}

fn boolean(value: &Expr, key: &str) -> darling::Result<LitBool> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.clone()),
        _ => Err(
            darling::Error::custom(format!("`{key}` takes `true` or `false`")).with_span(value),
        ),
    }
}

fn path_value(value: &Expr, key: &str) -> darling::Result<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Err(darling::Error::custom(format!(
            "`{key}` takes a path, not a string: write `{key} = {}`",
            s.value()
        ))
        .with_span(value)),
        _ => Err(darling::Error::custom(format!("`{key}` takes a path")).with_span(value)),
    }
}

fn effect(value: &Expr) -> darling::Result<(Effect, Span)> {
    let word = match value {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    };
    let effect = match word.as_deref() {
        Some("read") => Effect::Read,
        Some("write") => Effect::Write,
        Some("destructive") => Effect::Destructive,
        _ => {
            return Err(darling::Error::custom(
                "`effect` is one of the bare words `read`, `write` or `destructive`",
            )
            .with_span(value));
        }
    };
    Ok((effect, value.span()))
}

fn timeout(value: &Expr) -> darling::Result<(u64, Span)> {
    let text = string(value, "timeout")?;
    parse_duration_ms(&text.value())
        .filter(|&ms| ms > 0)
        .map(|ms| (ms, text.span()))
        .ok_or_else(|| {
            darling::Error::custom(
                "`timeout` is a positive whole number with a unit: \"500ms\", \"30s\", \"5m\" or \"1h\"",
            )
            .with_span(&text)
        })
}

/// `"500ms"`, `"30s"`, `"5m"`, `"1h"` in milliseconds.
fn parse_duration_ms(text: &str) -> Option<u64> {
    let digits = text.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let factor = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return None,
    };
    number.checked_mul(factor)
}

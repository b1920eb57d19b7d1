//! Parsing `#[tool(...)]`: every key/value, each mistake recorded and the
//! parse carried on so that all of them are reported in one build.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Lit, LitBool, LitStr, Meta, Path, Token, UnOp};

use crate::errors::{Errors, did_you_mean};

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
    "tags",
    "timeout",
    "concurrency",
    "exclusive",
    "max_result",
    "args",
    "crate",
];

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    Read,
    Write,
    Destructive,
}

impl Effect {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Destructive => "destructive",
        }
    }
}

pub(crate) enum Authorize {
    Public,
    Hook(Path),
}

/// The attribute's values, each with the span of what the user wrote.
#[derive(Default)]
pub(crate) struct ToolAttr {
    /// Every key the user wrote, valid or not, and the keys that unknown
    /// ones most likely meant, so that a misspelt or malformed key is not
    /// also reported as missing.
    pub written: Vec<String>,
    pub meant: Vec<&'static str>,
    /// The attribute's arguments, where a missing key is reported.
    pub tokens: TokenStream,
    pub key: Option<LitStr>,
    pub name: Option<LitStr>,
    pub title: Option<LitStr>,
    pub description: Option<LitStr>,
    pub effect: Option<(Effect, Span)>,
    pub authorize: Option<Authorize>,
    pub approve: Option<Path>,
    pub idempotent: Option<LitBool>,
    pub open_world: Option<LitBool>,
    /// The tags written as string literals; their form is checked in `valid`.
    pub tags: Option<Vec<LitStr>>,
    pub timeout: Option<(u64, Span)>,
    /// `concurrency = N`, N at least 1.
    pub concurrency: Option<(u32, Span)>,
    /// `exclusive` or `exclusive = true|false`.
    pub exclusive: Option<LitBool>,
    /// `max_result = N` characters, N at least 1.
    pub max_result: Option<u32>,
    pub args: Option<syn::Ident>,
    /// `crate = path`: where the generated code finds toolwright.
    pub krate: Option<Path>,
}

impl ToolAttr {
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
        let mut attr = ToolAttr {
            tokens: tokens.clone(),
            ..ToolAttr::default()
        };
        let metas = match Punctuated::<Meta, Token![,]>::parse_terminated.parse2(tokens) {
            Ok(metas) => metas,
            Err(error) => {
                errors.push(error);
                // Nothing can be read, so nothing is reported as missing.
                attr.written = KEYS.iter().map(|k| (*k).to_owned()).collect();
                return attr;
            }
        };
        for meta in metas {
            let path = meta.path();
            let Some(ident) = path.get_ident() else {
                errors.spanned(
                    path,
                    "expected a key such as `key`, `effect` or `authorize`, not a path",
                );
                continue;
            };
            let key = ident.to_string();
            if attr.written.contains(&key) {
                errors.spanned(ident, format!("`{key}` is given twice; keep one"));
                continue;
            }
            attr.written.push(key.clone());
            if !KEYS.contains(&key.as_str()) {
                let message = match did_you_mean(&key, KEYS) {
                    Some(meant) => {
                        attr.meant.push(meant);
                        format!("unknown key `{key}`; did you mean `{meant}`?")
                    }
                    None => format!(
                        "unknown key `{key}`; `#[tool]` takes {}",
                        KEYS.iter()
                            .map(|k| format!("`{k}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                errors.spanned(ident, message);
                continue;
            }
            let value = match &meta {
                Meta::NameValue(nv) => &nv.value,
                Meta::Path(_) if is_flag(&key) => {
                    let flag = LitBool::new(true, ident.span());
                    attr.set_flag(&key, flag);
                    continue;
                }
                _ => {
                    errors.spanned(&meta, format!("write `{key} = ...`"));
                    continue;
                }
            };
            match key.as_str() {
                "key" => attr.key = handle(errors, string(value, &key)),
                "name" => attr.name = handle(errors, string(value, &key)),
                "title" => attr.title = handle(errors, string(value, &key)),
                "description" => attr.description = handle(errors, string(value, &key)),
                "effect" => attr.effect = handle(errors, effect(value)),
                "authorize" => {
                    attr.authorize = handle(errors, path_value(value, &key)).map(|p| {
                        if p.is_ident("public") {
                            Authorize::Public
                        } else {
                            Authorize::Hook(p)
                        }
                    })
                }
                "approve" => attr.approve = handle(errors, path_value(value, &key)),
                "idempotent" | "open_world" | "exclusive" => {
                    if let Some(flag) = handle(errors, boolean(value, &key)) {
                        attr.set_flag(&key, flag);
                    }
                }
                "tags" => attr.tags = Some(tags(value, errors)),
                "timeout" => attr.timeout = handle(errors, timeout(value)),
                "concurrency" => attr.concurrency = handle(errors, concurrency(value)),
                "max_result" => attr.max_result = handle(errors, max_result(value)).map(|(n, _)| n),
                "args" => {
                    attr.args = handle(
                        errors,
                        path_value(value, &key).and_then(|p| {
                            p.get_ident().cloned().ok_or_else(|| {
                                syn::Error::new_spanned(
                                    &p,
                                    "`args` is a type name such as `FindArgs`",
                                )
                            })
                        }),
                    )
                }
                "crate" => attr.krate = handle(errors, crate_path(value)),
                _ => unreachable!("every key in KEYS is matched"),
            }
        }
        attr
    }

    /// Whether the user wrote `key`, even if its value was rejected.
    pub(crate) fn wrote(&self, key: &str) -> bool {
        self.written.iter().any(|k| k == key) || self.meant.contains(&key)
    }

    /// Where a missing key is reported: the attribute's arguments, or the
    /// whole attribute when it has none.
    pub(crate) fn missing(&self, errors: &mut Errors, message: &str) {
        if self.tokens.is_empty() {
            errors.at(Span::call_site(), message);
        } else {
            errors.spanned(&self.tokens, message);
        }
    }

    fn set_flag(&mut self, key: &str, flag: LitBool) {
        match key {
            "idempotent" => self.idempotent = Some(flag),
            "open_world" => self.open_world = Some(flag),
            _ => self.exclusive = Some(flag),
        }
    }
}

/// The keys that may be written alone, meaning `= true`.
fn is_flag(key: &str) -> bool {
    matches!(key, "idempotent" | "open_world" | "exclusive")
}

fn handle<T>(errors: &mut Errors, result: syn::Result<T>) -> Option<T> {
    result.map_err(|error| errors.push(error)).ok()
}

fn string(value: &Expr, key: &str) -> syn::Result<LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` takes a string: `{key} = \"...\"`"),
        )),
    }
}

fn boolean(value: &Expr, key: &str) -> syn::Result<LitBool> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.clone()),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` takes `true` or `false`"),
        )),
    }
}

fn path_value(value: &Expr, key: &str) -> syn::Result<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Err(syn::Error::new_spanned(
            value,
            format!(
                "`{key}` takes a path, not a string: write `{key} = {}`",
                s.value()
            ),
        )),
        _ => Err(syn::Error::new_spanned(
            value,
            format!("`{key}` takes a path, such as `{key} = my_hook`"),
        )),
    }
}

/// `crate = tw` or, as serde and schemars spell it, `crate = "tw"`.
fn crate_path(value: &Expr) -> syn::Result<Path> {
    let message =
        "`crate` is the path toolwright is reached by, such as `crate = my_sdk::toolwright`";
    match value {
        Expr::Path(p) if p.qself.is_none() => Ok(p.path.clone()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => s
            .parse_with(Path::parse_mod_style)
            .map_err(|_| syn::Error::new_spanned(s, message)),
        _ => Err(syn::Error::new_spanned(value, message)),
    }
}

fn effect(value: &Expr) -> syn::Result<(Effect, Span)> {
    let word = match value {
        Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    };
    let effect = match word.as_deref() {
        Some("read") => Effect::Read,
        Some("write") => Effect::Write,
        Some("destructive") => Effect::Destructive,
        _ => {
            const EFFECTS: &[&str] = &["read", "write", "destructive"];
            let message = "`effect` is one of the bare words `read`, `write` or `destructive`";
            let message = match value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) if EFFECTS.contains(&s.value().as_str()) => {
                    format!("{message}; remove the quotes: `effect = {}`", s.value())
                }
                _ => match word.as_deref().and_then(|w| did_you_mean(w, EFFECTS)) {
                    Some(meant) => format!("{message}; did you mean `{meant}`?"),
                    None => message.to_owned(),
                },
            };
            return Err(syn::Error::new_spanned(value, message));
        }
    };
    Ok((effect, value.span()))
}

/// `tags = ["pii", "network"]`: the string literals, each other element
/// reported on itself so that the rest are still checked.
fn tags(value: &Expr, errors: &mut Errors) -> Vec<LitStr> {
    let Expr::Array(array) = value else {
        let message = match value {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => format!(
                "`tags` takes an array of string literals: write `tags = [\"{}\"]`",
                s.value()
            ),
            _ => {
                "`tags` takes an array of string literals, such as `tags = [\"pii\", \"network\"]`"
                    .to_owned()
            }
        };
        errors.spanned(value, message);
        return Vec::new();
    };
    let mut tags = Vec::new();
    for element in &array.elems {
        match element {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => tags.push(s.clone()),
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let word = p.path.to_token_stream();
                errors.spanned(
                    element,
                    format!("a tag is a string literal; add quotes: `\"{word}\"`"),
                );
            }
            _ => errors.spanned(element, "a tag is a string literal, such as `\"pii\"`"),
        }
    }
    tags
}

fn timeout(value: &Expr) -> syn::Result<(u64, Span)> {
    let text = string(value, "timeout")?;
    parse_duration_ms(&text.value())
        .filter(|&ms| ms > 0)
        .map(|ms| (ms, text.span()))
        .ok_or_else(|| {
            syn::Error::new_spanned(
                &text,
                "`timeout` is a positive whole number with a unit: \"500ms\", \"30s\", \"5m\" or \"1h\"",
            )
        })
}

/// `concurrency = 4`: how many calls of the tool may run at once.
fn concurrency(value: &Expr) -> syn::Result<(u32, Span)> {
    positive(
        value,
        "`concurrency` is how many calls of the tool may run at once: a whole number of at least 1, such as `concurrency = 4`",
        "`concurrency = 0` would never run the tool; write at least 1, or `exclusive` to run it alone",
    )
}

/// `max_result = 20_000`: how many characters of a result a model is shown.
fn max_result(value: &Expr) -> syn::Result<(u32, Span)> {
    positive(
        value,
        "`max_result` is how many characters of the result a model is shown: a whole number of at least 1, such as `max_result = 20_000`",
        "`max_result = 0` would show a model nothing of the result; write at least 1",
    )
}

/// A whole number from 1 to `u32::MAX`, written as an integer literal;
/// `usage` says what the key takes, `zero` why 0 is refused.
fn positive(value: &Expr, usage: &str, zero: &str) -> syn::Result<(u32, Span)> {
    let negative =
        || syn::Error::new_spanned(value, format!("{usage}; a negative number is not one"));
    let number = match value {
        // An attribute's `-2` can reach here as one literal.
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) if int.base10_digits().starts_with('-') => return Err(negative()),
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) if int.suffix().is_empty() => int,
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_), ..
        }) => return Err(negative()),
        Expr::Lit(ExprLit {
            lit: Lit::Str(_), ..
        }) => {
            return Err(syn::Error::new_spanned(
                value,
                format!("{usage}; write the number without quotes or a unit"),
            ));
        }
        _ => return Err(syn::Error::new_spanned(value, usage)),
    };
    match number.base10_parse::<u32>() {
        Ok(0) => Err(syn::Error::new_spanned(number, zero)),
        Ok(n) => Ok((n, number.span())),
        Err(_) => Err(syn::Error::new_spanned(
            number,
            format!("{usage}; this one is larger than {}", u32::MAX),
        )),
    }
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

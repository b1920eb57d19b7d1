//! Parsing `#[tool(...)]` with darling: the derived [`ByKey`] sorts the
//! items by key, a `FromMeta` type reads each value, and darling's
//! accumulator collects every mistake so that all of them are reported in
//! one build.

use darling::ast::NestedMeta;
use darling::error::Accumulator;
use darling::util::SpannedValue;
use darling::{Error, FromMeta};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, Ident, Lit, LitBool, LitStr, Meta, Path, UnOp};

use crate::errors::{Errors, did_you_mean};

/// The keys `#[tool]` understands (the fields of [`ByKey`]), for
/// did-you-mean suggestions.
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
    "defer",
    "search_hint",
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
    /// `defer` or `defer = true|false`.
    pub defer: Option<LitBool>,
    pub search_hint: Option<LitStr>,
    pub args: Option<syn::Ident>,
    /// `crate = path`: where the generated code finds toolwright.
    pub krate: Option<Path>,
}

/// `#[tool(...)]` as written: darling sorts the items by key, and
/// [`ToolAttr::parse`] reads each value on its own, because a derived struct
/// with typed fields is lost whole when one value is refused, and `valid`'s
/// checks across keys (a write without `approve`) need the others.
#[derive(FromMeta)]
struct ByKey {
    // `multiple` on each key: a repeated key is reported on the key with its
    // fix ("keep one"), where darling's "Duplicate field" names none.
    #[darling(multiple)]
    key: Vec<Meta>,
    #[darling(multiple)]
    name: Vec<Meta>,
    #[darling(multiple)]
    title: Vec<Meta>,
    #[darling(multiple)]
    description: Vec<Meta>,
    #[darling(multiple)]
    effect: Vec<Meta>,
    #[darling(multiple)]
    authorize: Vec<Meta>,
    #[darling(multiple)]
    approve: Vec<Meta>,
    #[darling(multiple)]
    idempotent: Vec<Meta>,
    #[darling(multiple)]
    open_world: Vec<Meta>,
    #[darling(multiple)]
    tags: Vec<Meta>,
    #[darling(multiple)]
    timeout: Vec<Meta>,
    #[darling(multiple)]
    concurrency: Vec<Meta>,
    #[darling(multiple)]
    exclusive: Vec<Meta>,
    #[darling(multiple)]
    max_result: Vec<Meta>,
    #[darling(multiple)]
    defer: Vec<Meta>,
    #[darling(multiple)]
    search_hint: Vec<Meta>,
    #[darling(multiple)]
    args: Vec<Meta>,
    #[darling(multiple, rename = "crate")]
    krate: Vec<Meta>,
    // Reported by `ToolAttr::parse`, which names every key: darling lists
    // the valid ones only when there are fewer than ten.
    #[darling(flatten)]
    unknown: Unknown,
}

/// The items whose key `#[tool]` does not take.
struct Unknown(Vec<NestedMeta>);

impl FromMeta for Unknown {
    fn from_list(items: &[NestedMeta]) -> darling::Result<Self> {
        Ok(Unknown(items.to_vec()))
    }
}

impl ToolAttr {
    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> ToolAttr {
        let mut attr = ToolAttr {
            tokens: tokens.clone(),
            ..ToolAttr::default()
        };
        let items = match NestedMeta::parse_meta_list(tokens) {
            Ok(items) => items,
            Err(error) => {
                errors.push(error);
                // Nothing can be read, so nothing is reported as missing.
                attr.written = KEYS.iter().map(|k| (*k).to_owned()).collect();
                return attr;
            }
        };
        // Reported here, so that the rest is still read: darling refuses the
        // whole list with "Unexpected meta-item format" for one literal.
        let (literals, items): (Vec<_>, Vec<_>) = items
            .into_iter()
            .partition(|item| matches!(item, NestedMeta::Lit(_)));
        for literal in literals {
            errors.spanned(
                literal,
                "`#[tool]` takes `key = value` items, not a bare literal, such as `key = \"products.get\"`",
            );
        }
        let by_key = match ByKey::from_list(&items) {
            Ok(by_key) => by_key,
            // A known key's value that is no expression at all.
            Err(error) => {
                errors.push(error.into());
                attr.written = KEYS.iter().map(|k| (*k).to_owned()).collect();
                return attr;
            }
        };
        attr.unknown(errors, &by_key.unknown.0);
        let mut found = Error::accumulator();
        let acc = &mut found;
        attr.key = attr.read(acc, "key", by_key.key).map(|Text(s)| s);
        attr.name = attr.read(acc, "name", by_key.name).map(|Text(s)| s);
        attr.title = attr.read(acc, "title", by_key.title).map(|Text(s)| s);
        attr.description = attr
            .read(acc, "description", by_key.description)
            .map(|Text(s)| s);
        attr.effect = attr
            .read::<SpannedValue<Effect>>(acc, "effect", by_key.effect)
            .map(|effect| (*effect, effect.span()));
        attr.authorize = attr
            .read(acc, "authorize", by_key.authorize)
            .map(|Hook(path)| {
                if path.is_ident("public") {
                    Authorize::Public
                } else {
                    Authorize::Hook(path)
                }
            });
        attr.approve = attr.read(acc, "approve", by_key.approve).map(|Hook(p)| p);
        attr.idempotent = attr
            .read(acc, "idempotent", by_key.idempotent)
            .map(|Flag(b)| b);
        attr.open_world = attr
            .read(acc, "open_world", by_key.open_world)
            .map(|Flag(b)| b);
        attr.exclusive = attr
            .read(acc, "exclusive", by_key.exclusive)
            .map(|Flag(b)| b);
        attr.tags = attr
            .first(acc, "tags", by_key.tags)
            .map(|meta| tags(&meta, acc));
        attr.timeout = attr
            .read(acc, "timeout", by_key.timeout)
            .map(|Timeout(ms, span)| (ms, span));
        attr.concurrency = attr
            .read(acc, "concurrency", by_key.concurrency)
            .map(|Count(n, span)| (n, span));
        attr.max_result = attr
            .read(acc, "max_result", by_key.max_result)
            .map(|Count(n, _)| n);
        attr.defer = attr.read(acc, "defer", by_key.defer).map(|Flag(b)| b);
        attr.search_hint = attr
            .read(acc, "search_hint", by_key.search_hint)
            .map(|Text(s)| s);
        attr.args = attr.read(acc, "args", by_key.args).map(|Args(i)| i);
        attr.krate = attr.read(acc, "crate", by_key.krate).map(|Crate(p)| p);
        if let Err(error) = found.finish() {
            errors.push(error.into());
        }
        attr
    }

    /// The first `key = ...` the user wrote, noted as written; every
    /// repetition reported on its key.
    fn first(&mut self, acc: &mut Accumulator, key: &str, metas: Vec<Meta>) -> Option<Meta> {
        let mut metas = metas.into_iter();
        let first = metas.next()?;
        self.written.push(key.to_owned());
        for repeated in metas {
            acc.push(
                Error::custom(format!("`{key}` is given twice; keep one"))
                    .with_span(repeated.path()),
            );
        }
        Some(first)
    }

    /// The first `key = ...`, read as a `T`.
    fn read<T: FromMeta>(
        &mut self,
        acc: &mut Accumulator,
        key: &str,
        metas: Vec<Meta>,
    ) -> Option<T> {
        let meta = self.first(acc, key, metas)?;
        acc.handle(T::from_meta(&meta))
    }

    /// Reports each key `#[tool]` does not take, noting the key it most
    /// likely meant so that one is not also reported as missing (into
    /// `errors`, where a path such as `a::b` is underlined whole).
    fn unknown(&mut self, errors: &mut Errors, items: &[NestedMeta]) {
        for item in items {
            let path = match item {
                NestedMeta::Meta(meta) => meta.path(),
                NestedMeta::NameValueInvalidExpr(meta) => &meta.path,
                // Taken out before darling sorts the keys.
                NestedMeta::Lit(_) => continue,
            };
            let Some(ident) = path.get_ident() else {
                errors.spanned(
                    path,
                    "expected a key such as `key`, `effect` or `authorize`, not a path",
                );
                continue;
            };
            let key = ident.to_string();
            self.written.push(key.clone());
            let message = match did_you_mean(&key, KEYS) {
                Some(meant) => {
                    self.meant.push(meant);
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
        }
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
}

/// The key of a `key = value` item.
fn key_of(meta: &Meta) -> String {
    meta.path().to_token_stream().to_string()
}

/// The value of a `key = value` item, or an error saying to write it so.
fn value_of(meta: &Meta) -> darling::Result<&Expr> {
    match meta {
        Meta::NameValue(nv) => Ok(ungroup(&nv.value)),
        _ => Err(Error::custom(format!("write `{} = ...`", key_of(meta))).with_span(meta)),
    }
}

/// An expression without the invisible group a `macro_rules!` may wrap it in.
fn ungroup(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => ungroup(&group.expr),
        _ => expr,
    }
}

fn lit_str(value: &Expr) -> Option<&LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s),
        _ => None,
    }
}

/// `key = "..."`: a string literal.
struct Text(LitStr);

impl FromMeta for Text {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let value = value_of(meta)?;
        let key = key_of(meta);
        lit_str(value).cloned().map(Text).ok_or_else(|| {
            Error::custom(format!("`{key}` takes a string: `{key} = \"...\"`")).with_span(value)
        })
    }
}

/// `flag`, meaning `true`, or `flag = true|false`.
struct Flag(LitBool);

impl FromMeta for Flag {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        if let Meta::Path(path) = meta {
            return Ok(Flag(LitBool::new(true, path.span())));
        }
        let value = value_of(meta)?;
        match value {
            Expr::Lit(ExprLit {
                lit: Lit::Bool(b), ..
            }) => Ok(Flag(b.clone())),
            _ => Err(
                Error::custom(format!("`{}` takes `true` or `false`", key_of(meta)))
                    .with_span(value),
            ),
        }
    }
}

/// `authorize = path`, `approve = path`: a hook.
struct Hook(Path);

impl FromMeta for Hook {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let value = value_of(meta)?;
        let key = key_of(meta);
        let message = match value {
            Expr::Path(p) if p.qself.is_none() => return Ok(Hook(p.path.clone())),
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => format!(
                "`{key}` takes a path, not a string: write `{key} = {}`",
                s.value()
            ),
            _ => format!("`{key}` takes a path, such as `{key} = my_hook`"),
        };
        Err(Error::custom(message).with_span(value))
    }
}

/// `args = TypeName`.
struct Args(Ident);

impl FromMeta for Args {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let Hook(path) = Hook::from_meta(meta)?;
        match path.get_ident() {
            Some(ident) => Ok(Args(ident.clone())),
            None => Err(Error::custom("`args` is a type name such as `FindArgs`").with_span(&path)),
        }
    }
}

/// `crate = tw` or, as serde and schemars spell it, `crate = "tw"`.
struct Crate(Path);

impl FromMeta for Crate {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let value = value_of(meta)?;
        let refused = || {
            Error::custom(
                "`crate` is the path toolwright is reached by, such as `crate = my_sdk::toolwright`",
            )
            .with_span(value)
        };
        match value {
            Expr::Path(p) if p.qself.is_none() => Ok(Crate(p.path.clone())),
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => s
                .parse_with(Path::parse_mod_style)
                .map(Crate)
                .map_err(|_| refused()),
            _ => Err(refused()),
        }
    }
}

impl FromMeta for Effect {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let value = value_of(meta)?;
        let word = match value {
            Expr::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        match word.as_deref() {
            Some("read") => return Ok(Effect::Read),
            Some("write") => return Ok(Effect::Write),
            Some("destructive") => return Ok(Effect::Destructive),
            _ => {}
        }
        const EFFECTS: &[&str] = &["read", "write", "destructive"];
        let message = "`effect` is one of the bare words `read`, `write` or `destructive`";
        let message = match lit_str(value) {
            Some(s) if EFFECTS.contains(&s.value().as_str()) => {
                format!("{message}; remove the quotes: `effect = {}`", s.value())
            }
            _ => match word.as_deref().and_then(|w| did_you_mean(w, EFFECTS)) {
                Some(meant) => format!("{message}; did you mean `{meant}`?"),
                None => message.to_owned(),
            },
        };
        Err(Error::custom(message).with_span(value))
    }
}

/// `tags = ["pii", "network"]`: the string literals, each other element
/// reported on itself so that the rest are still checked (a `FromMeta`
/// value is all or nothing).
fn tags(meta: &Meta, acc: &mut Accumulator) -> Vec<LitStr> {
    let value = match value_of(meta) {
        Ok(value) => value,
        Err(error) => {
            acc.push(error);
            return Vec::new();
        }
    };
    let Expr::Array(array) = value else {
        let message = match lit_str(value) {
            Some(s) => format!(
                "`tags` takes an array of string literals: write `tags = [\"{}\"]`",
                s.value()
            ),
            None => {
                "`tags` takes an array of string literals, such as `tags = [\"pii\", \"network\"]`"
                    .to_owned()
            }
        };
        acc.push(Error::custom(message).with_span(value));
        return Vec::new();
    };
    let mut tags = Vec::new();
    for element in &array.elems {
        match ungroup(element) {
            Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) => tags.push(s.clone()),
            Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                let word = p.path.to_token_stream();
                acc.push(
                    Error::custom(format!(
                        "a tag is a string literal; add quotes: `\"{word}\"`"
                    ))
                    .with_span(element),
                );
            }
            _ => acc.push(
                Error::custom("a tag is a string literal, such as `\"pii\"`").with_span(element),
            ),
        }
    }
    tags
}

/// `timeout = "30s"`, in milliseconds.
struct Timeout(u64, Span);

impl FromMeta for Timeout {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let Text(text) = Text::from_meta(meta)?;
        parse_duration_ms(&text.value())
            .filter(|&ms| ms > 0)
            .map(|ms| Timeout(ms, text.span()))
            .ok_or_else(|| {
                Error::custom(
                    "`timeout` is a positive whole number with a unit: \"500ms\", \"30s\", \"5m\" or \"1h\"",
                )
                .with_span(&text)
            })
    }
}

/// `concurrency = 4` (how many calls of the tool may run at once) or
/// `max_result = 20_000` (how many characters of a result a model is shown):
/// a whole number from 1 to `u32::MAX`, written as an integer literal.
struct Count(u32, Span);

impl FromMeta for Count {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let (usage, zero) = if meta.path().is_ident("concurrency") {
            (
                "`concurrency` is how many calls of the tool may run at once: a whole number of at least 1, such as `concurrency = 4`",
                "`concurrency = 0` would never run the tool; write at least 1, or `exclusive` to run it alone",
            )
        } else {
            (
                "`max_result` is how many characters of the result a model is shown: a whole number of at least 1, such as `max_result = 20_000`",
                "`max_result = 0` would show a model nothing of the result; write at least 1",
            )
        };
        let value = value_of(meta)?;
        let refused = |message: String| Err(Error::custom(message).with_span(value));
        let number = match value {
            // An attribute's `-2` can reach here as one literal.
            Expr::Lit(ExprLit {
                lit: Lit::Int(int), ..
            }) if int.base10_digits().starts_with('-') => {
                return refused(format!("{usage}; a negative number is not one"));
            }
            Expr::Lit(ExprLit {
                lit: Lit::Int(int), ..
            }) if int.suffix().is_empty() => int,
            Expr::Unary(ExprUnary {
                op: UnOp::Neg(_), ..
            }) => return refused(format!("{usage}; a negative number is not one")),
            Expr::Lit(ExprLit {
                lit: Lit::Str(_), ..
            }) => {
                return refused(format!(
                    "{usage}; write the number without quotes or a unit"
                ));
            }
            _ => return refused(usage.to_owned()),
        };
        match number.base10_parse::<u32>() {
            Ok(0) => Err(Error::custom(zero).with_span(number)),
            Ok(n) => Ok(Count(n, number.span())),
            Err(_) => Err(
                Error::custom(format!("{usage}; this one is larger than {}", u32::MAX))
                    .with_span(number),
            ),
        }
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

//! A typed copy of the annotated fn: its parameters classified by syntax
//! (input, injected, context), with the original kept for spans and for
//! re-emission.

use darling::FromMeta;
use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, FnArg, GenericArgument, Ident, ItemFn, LitStr, Meta, Pat, PathArguments,
    ReturnType, Type, Visibility,
};

use crate::errors::Errors;

pub(crate) struct ToolFn {
    /// The fn as it will be emitted: parameter attributes of ours removed.
    pub item: ItemFn,
    pub vis: Visibility,
    pub ident: Ident,
    /// The doc comment, lines joined; `None` when there is none.
    pub docs: Option<(String, Span)>,
    /// A doc attribute whose value is not a string literal
    /// (`#[doc = include_str!("..")]`): its text cannot be read here.
    pub unread_doc: Option<Attribute>,
    pub params: Vec<Param>,
    pub output: Output,
    /// Whether the fn takes `self`: it then sits in an `impl` block, where
    /// no struct can be emitted beside it.
    pub has_receiver: bool,
}

pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: Kind,
}

#[allow(
    clippy::large_enum_variant,
    reason = "a few per fn, for the length of one expansion"
)]
pub(crate) enum Kind {
    Input(Input),
    Inject,
    Context,
}

#[derive(Default)]
pub(crate) struct Input {
    /// `#[doc]` and `#[schemars]` attributes, moved onto the generated field.
    pub field_attrs: Vec<Attribute>,
    pub default: Option<Expr>,
    pub rename: Option<LitStr>,
    /// `#[secret]`: the schema marks the field `writeOnly`, and the
    /// runtime keeps its value out of every log, event and error text.
    pub secret: bool,
    /// What the written `JsonSchema` impl reads of `field_attrs`; `None`
    /// when the struct's schema must be derived.
    pub written_schema: Option<WrittenSchema>,
}

impl Param {
    /// The field name callers use.
    pub(crate) fn wire_name(&self) -> String {
        match &self.kind {
            Kind::Input(Input {
                rename: Some(name), ..
            }) => name.value(),
            _ => unraw(&self.ident),
        }
    }
}

pub(crate) enum Output {
    Unit,
    Plain(Type),
    /// A return type whose last segment is `Result`.
    Fallible(Type),
}

pub(crate) fn unraw(ident: &Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}

impl ToolFn {
    /// The parameters that are argument fields, with their attributes.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = (&Param, &Input)> {
        self.params.iter().filter_map(|p| match &p.kind {
            Kind::Input(input) => Some((p, input)),
            _ => None,
        })
    }

    pub(crate) fn parse(mut item: ItemFn, errors: &mut Errors) -> ToolFn {
        let sig = &item.sig;
        if sig.asyncness.is_none() {
            errors.spanned(
                sig.fn_token,
                "a tool is an `async fn`; add `async` before `fn`",
            );
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.spanned(
                &sig.generics,
                "a tool cannot be generic: its schema is fixed at compile time; use concrete types",
            );
        }
        if let Some(variadic) = &sig.variadic {
            errors.spanned(variadic, "a tool cannot be variadic; take a `Vec<T>` input");
        }

        let (docs, unread_doc) = doc_text(&item.attrs);
        let mut params = Vec::new();
        let mut has_receiver = false;
        for arg in item.sig.inputs.iter_mut() {
            match arg {
                FnArg::Receiver(receiver) => {
                    has_receiver = true;
                    errors.spanned(
                        &*receiver,
                        "a tool is a free `async fn`, not a method; take the service as `Inject<T>` instead of `self`",
                    );
                }
                FnArg::Typed(pat_type) => {
                    let attrs = std::mem::take(&mut pat_type.attrs);
                    let (kept, param) = classify(attrs, &pat_type.pat, &pat_type.ty, errors);
                    pat_type.attrs = kept;
                    params.extend(param);
                }
            }
        }

        let output = match &item.sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => {
                if contains_impl_trait(ty) {
                    errors.spanned(
                        ty,
                        "a tool's return type is named so its schema can be generated; replace `impl Trait` with a concrete type",
                    );
                }
                if is_result(ty) {
                    Output::Fallible((**ty).clone())
                } else {
                    Output::Plain((**ty).clone())
                }
            }
        };

        ToolFn {
            vis: item.vis.clone(),
            ident: item.sig.ident.clone(),
            docs,
            unread_doc,
            params,
            output,
            has_receiver,
            item,
        }
    }
}

/// Sorts a parameter's attributes into ours and the ones that stay on the fn,
/// and classifies the parameter.
fn classify(
    attrs: Vec<Attribute>,
    pat: &Pat,
    ty: &Type,
    errors: &mut Errors,
) -> (Vec<Attribute>, Option<Param>) {
    let mut kept = Vec::new();
    let mut input = Input::default();
    let mut marked_inject = None;
    let mut marked_secret: Option<Attribute> = None;
    // `#[default]`, `#[rename]` and `#[schemars]`: wrong on a non-input.
    let mut input_only = Vec::new();
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") {
            input.field_attrs.push(attr);
        } else if path.is_ident("schemars") {
            input_only.push(attr.clone());
            input.field_attrs.push(attr);
        } else if path.is_ident("inject") {
            if let Some(Marker) = read(errors, &attr) {
                marked_inject = Some(attr);
            }
        } else if path.is_ident("secret") {
            if let Some(Marker) = read(errors, &attr) {
                if marked_secret.is_some() {
                    errors.spanned(&attr, "`#[secret]` is given twice; remove this one");
                } else {
                    marked_secret = Some(attr);
                }
            }
        } else if path.is_ident("default") {
            input.default = read(errors, &attr).map(|DefaultValue(value)| value);
            input_only.push(attr);
        } else if path.is_ident("rename") {
            input.rename = read(errors, &attr).map(|Rename(name)| name);
            input_only.push(attr);
        } else if path.is_ident("serde") {
            errors.spanned(
                &attr,
                "`#[serde(...)]` is not supported on tool parameters; use `#[rename = \"...\"]` or `#[default = expr]`, which keep the schema and the parser in agreement",
            );
        } else if ["allow", "warn", "deny", "expect", "cfg_attr"]
            .iter()
            .any(|lint| path.is_ident(lint))
        {
            kept.push(attr);
        } else {
            let name = path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect::<Vec<_>>()
                .join("::");
            errors.spanned(
                &attr,
                format!(
                    "`#[{name}]` is not supported on tool parameters; they take doc comments, `#[inject]`, `#[secret]`, `#[default = expr]`, `#[rename = \"...\"]` and `#[schemars(...)]`"
                ),
            );
        }
    }

    let ident = match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        _ => {
            errors.spanned(
                pat,
                "a tool parameter is a plain name (its field name in the schema); destructure it inside the body",
            );
            return (kept, None);
        }
    };

    let injected = marked_inject.is_some() || last_segment_is(ty, "Inject");
    let context = !injected && last_segment_is(ty, "Context");
    if let Some(attr) = marked_inject
        .as_ref()
        .filter(|_| last_segment_is(ty, "Context"))
    {
        errors.spanned(
            attr,
            "a `Context<C>` parameter receives the caller's context and is not injected; remove `#[inject]`",
        );
    }
    if injected || context {
        let what = if injected {
            "injected"
        } else {
            "the caller's context"
        };
        for attr in &input_only {
            errors.spanned(
                attr,
                format!(
                    "`{ident}` is {what}, not an input; `#[default]`, `#[rename]` and `#[schemars]` describe input fields, so remove this attribute"
                ),
            );
        }
    }
    if let Some(attr) = marked_secret.as_ref().filter(|_| injected || context) {
        let what = if injected {
            "injected from the call's scope"
        } else {
            "the caller's context"
        };
        errors.spanned(
            attr,
            format!(
                "`{ident}` is {what}, never an argument a caller sends, so it has no value to hide; `#[secret]` marks input parameters: remove it"
            ),
        );
    }
    input.secret = marked_secret.is_some();
    let kind = if injected {
        Kind::Inject
    } else if context {
        Kind::Context
    } else {
        input.written_schema = written_schema(&input.field_attrs);
        Kind::Input(input)
    };

    let mut valid = true;
    if contains_impl_trait(ty) {
        errors.spanned(
            ty,
            "a tool parameter has a concrete type so its schema can be generated; replace `impl Trait` with a concrete type",
        );
        valid = false;
    } else if let Type::Reference(reference) = ty {
        let message = match (&kind, &*reference.elem) {
            (Kind::Input(_), elem) if is_str(elem) => "inputs are owned; use String",
            (Kind::Input(_), Type::Slice(_)) => "inputs are owned; use `Vec<T>` instead of a slice",
            (Kind::Input(_), _) => {
                "inputs are owned; remove the `&` and take the value, which is deserialized for each call"
            }
            _ => {
                "injected and context parameters are owned; use `Inject<T>` or `Context<C>` without `&`"
            }
        };
        errors.spanned(ty, message);
        valid = false;
    }
    let param = valid.then(|| Param {
        ident,
        ty: ty.clone(),
        kind,
    });
    (kept, param)
}

/// One of our parameter attributes read as a `T`, its mistake recorded.
fn read<T: FromMeta>(errors: &mut Errors, attr: &Attribute) -> Option<T> {
    T::from_meta(&attr.meta)
        .map_err(|error| errors.push(error.into()))
        .ok()
}

/// `#[inject]`, `#[secret]`: a bare word.
struct Marker;

impl FromMeta for Marker {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let name = meta.path().to_token_stream();
        let message = format!("`#[{name}]` takes no arguments; write `#[{name}]`");
        match meta {
            Meta::Path(_) => Ok(Marker),
            // The arguments to remove, their parentheses included.
            Meta::List(list) => Err(syn::Error::new(list.delimiter.span().join(), message).into()),
            Meta::NameValue(nv) => Err(darling::Error::custom(message).with_span(&nv.value)),
        }
    }
}

/// `#[default = expr]`: the expression as written (darling's own
/// `syn::Expr` would read a string literal's contents as the expression).
struct DefaultValue(Expr);

impl FromMeta for DefaultValue {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        match meta {
            Meta::NameValue(nv) => Ok(DefaultValue(nv.value.clone())),
            _ => Err(
                darling::Error::custom("write `#[default = expr]`, e.g. `#[default = 10]`")
                    .with_span(meta.path()),
            ),
        }
    }
}

/// `#[rename = "fieldName"]`.
struct Rename(LitStr);

impl FromMeta for Rename {
    fn from_meta(meta: &Meta) -> darling::Result<Self> {
        let message = "write `#[rename = \"fieldName\"]`";
        match meta {
            Meta::NameValue(syn::MetaNameValue {
                value:
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(name),
                        ..
                    }),
                ..
            }) => Ok(Rename(name.clone())),
            Meta::NameValue(nv) => {
                let message = match &nv.value {
                    Expr::Path(p) if p.path.get_ident().is_some() => format!(
                        "`#[rename]` takes a string; add quotes: `#[rename = \"{}\"]`",
                        p.path.to_token_stream()
                    ),
                    _ => message.to_owned(),
                };
                Err(darling::Error::custom(message).with_span(&nv.value))
            }
            _ => Err(darling::Error::custom(message).with_span(meta.path())),
        }
    }
}

fn last_segment_is(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().is_some_and(|s| {
            s.ident == name && matches!(s.arguments, PathArguments::AngleBracketed(_))
        }),
        _ => false,
    }
}

fn is_result(ty: &Type) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => {
            p.path.segments.last().is_some_and(|s| s.ident == "Result")
        }
        _ => false,
    }
}

fn is_str(ty: &Type) -> bool {
    matches!(ty, Type::Path(p) if p.path.is_ident("str"))
}

fn contains_impl_trait(ty: &Type) -> bool {
    match ty {
        Type::ImplTrait(_) => true,
        Type::Reference(r) => contains_impl_trait(&r.elem),
        Type::Paren(p) => contains_impl_trait(&p.elem),
        Type::Group(g) => contains_impl_trait(&g.elem),
        Type::Slice(s) => contains_impl_trait(&s.elem),
        Type::Array(a) => contains_impl_trait(&a.elem),
        Type::Tuple(t) => t.elems.iter().any(contains_impl_trait),
        Type::Path(p) => p.path.segments.iter().any(|s| match &s.arguments {
            PathArguments::AngleBracketed(args) => args.args.iter().any(|a| match a {
                GenericArgument::Type(t) => contains_impl_trait(t),
                _ => false,
            }),
            _ => false,
        }),
        _ => false,
    }
}

/// The doc comment as one string: lines trimmed of the one space rustdoc
/// puts after `///`, joined with newlines, surrounding blank lines removed
/// (`None` when there is none). And the first doc attribute whose value
/// is not a string literal, such as `#[doc = include_str!("tool.md")]`,
/// which cannot be read: a macro there expands after `#[tool]` has read
/// the docs.
fn doc_text(attrs: &[Attribute]) -> (Option<(String, Span)>, Option<Attribute>) {
    let (mut lines, mut span, mut unread) = (Vec::new(), None, None);
    for attr in attrs {
        let Meta::NameValue(nv) = &attr.meta else {
            continue;
        };
        if !nv.path.is_ident("doc") {
            continue;
        }
        match &nv.value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => {
                span.get_or_insert(attr.span());
                let value = s.value();
                for line in value.lines() {
                    lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
                }
            }
            _ => {
                unread.get_or_insert_with(|| attr.clone());
            }
        }
    }
    let text = span.map(|span| (lines.join("\n").trim().to_owned(), span));
    (text, unread)
}

/// What `#[tool]`'s written `JsonSchema` impl needs of one input: its doc
/// comment as schemars' derive reads it (lines joined with `\n`, one
/// leading space dropped from each) and the checks of its
/// `#[schemars(...)]` attributes.
pub(crate) struct WrittenSchema {
    pub doc: String,
    pub checks: Vec<Check>,
}

/// A `#[schemars(...)]` validation the written impl applies to a field's
/// schema, as the derive does.
pub(crate) enum Check {
    /// `key: value` where the schema's type is `of_type` (`range`'s
    /// `minimum`/`maximum` on numbers, `length`'s `minLength`/`maxLength`
    /// on strings and `minItems`/`maxItems` on arrays, `regex`'s `pattern`).
    Bound {
        of_type: &'static str,
        key: &'static str,
        value: Expr,
    },
    /// `regex(pattern = ...)`: the pattern's `to_string()`, on strings.
    Pattern(Expr),
    /// `email`, `url`: a `format`, whatever the type.
    Format(&'static str),
}

/// An input's [`WrittenSchema`], read from its `#[doc]` and `#[schemars]`
/// attributes, or `None` when schemars' derive must be used: the input has
/// a `#[schemars(...)]` item other than `range`, `length`,
/// `regex(pattern = ...)`, `email` or `url` with plain values (anything
/// else, and any mistake, is the derive's to read and report), or a doc
/// comment that is not a string literal (`#[doc = include_str!(..)]`).
fn written_schema(field_attrs: &[Attribute]) -> Option<WrittenSchema> {
    let mut lines = Vec::new();
    let mut checks = Vec::new();
    let mut seen = Vec::new();
    for attr in field_attrs {
        if attr.path().is_ident("schemars") {
            attr.parse_nested_meta(|meta| schemars_check(&meta, &mut checks, &mut seen))
                .ok()?;
            continue;
        }
        let Meta::NameValue(meta) = &attr.meta else {
            return None;
        };
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(line),
            ..
        }) = &meta.value
        else {
            return None;
        };
        let line = line.value();
        lines.push(line.strip_prefix(' ').map(str::to_owned).unwrap_or(line));
    }
    Some(WrittenSchema {
        doc: lines.join("\n"),
        checks,
    })
}

/// Reads one item of a `#[schemars(...)]` attribute into `checks`, as
/// schemars' derive reads it; an error for anything the written impl
/// leaves to the derive (`seen` holds the items read, so that a repeated
/// one goes to the derive too, which reports it).
fn schemars_check(
    meta: &syn::meta::ParseNestedMeta<'_>,
    checks: &mut Vec<Check>,
    seen: &mut Vec<String>,
) -> syn::Result<()> {
    let unsupported = || meta.error("left to schemars' derive");
    let name = meta.path.get_ident().ok_or_else(unsupported)?.to_string();
    if seen.contains(&name) {
        return Err(unsupported());
    }
    seen.push(name.clone());
    match name.as_str() {
        "range" | "length" => {
            let (mut min, mut max, mut equal) = (None, None, None);
            meta.parse_nested_meta(|bound| {
                let slot = if bound.path.is_ident("min") {
                    &mut min
                } else if bound.path.is_ident("max") {
                    &mut max
                } else if bound.path.is_ident("equal") {
                    &mut equal
                } else {
                    return Err(bound.error("unknown bound"));
                };
                let value: Expr = bound.value()?.parse()?;
                // schemars reads a string's contents as the expression.
                if slot.is_some()
                    || matches!(&value, Expr::Lit(l) if matches!(l.lit, syn::Lit::Str(_)))
                {
                    return Err(bound.error("left to schemars' derive"));
                }
                *slot = Some(value);
                Ok(())
            })?;
            if equal.is_some() && (min.is_some() || max.is_some()) {
                return Err(unsupported());
            }
            let min = min.or_else(|| equal.clone());
            let max = max.or(equal);
            let kinds: &[(&str, &str, &str)] = if name == "range" {
                &[("number", "minimum", "maximum")]
            } else {
                &[
                    ("string", "minLength", "maxLength"),
                    ("array", "minItems", "maxItems"),
                ]
            };
            for &(of_type, min_key, max_key) in kinds {
                for (key, value) in [(min_key, &min), (max_key, &max)] {
                    if let Some(value) = value {
                        checks.push(Check::Bound {
                            of_type,
                            key,
                            value: value.clone(),
                        });
                    }
                }
            }
            Ok(())
        }
        "regex" => {
            let mut pattern = None;
            meta.parse_nested_meta(|item| {
                if !item.path.is_ident("pattern") || pattern.is_some() {
                    return Err(item.error("left to schemars' derive"));
                }
                let value: Expr = item.value()?.parse()?;
                pattern = Some(value);
                Ok(())
            })?;
            checks.push(Check::Pattern(pattern.ok_or_else(unsupported)?));
            Ok(())
        }
        "email" | "url" if meta.input.is_empty() || meta.input.peek(syn::Token![,]) => {
            checks.push(Check::Format(if name == "email" { "email" } else { "uri" }));
            Ok(())
        }
        _ => Err(unsupported()),
    }
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;
    use syn::{Attribute, parse_quote};

    use super::{Check, written_schema};

    /// The checks read from `attrs`, as text, or `None` for the derive.
    fn checks(attrs: &[Attribute]) -> Option<Vec<String>> {
        let schema = written_schema(attrs)?;
        Some(
            schema
                .checks
                .iter()
                .map(|check| match check {
                    Check::Bound {
                        of_type,
                        key,
                        value,
                    } => {
                        format!("{of_type} {key} {}", value.to_token_stream())
                    }
                    Check::Pattern(pattern) => format!("pattern {}", pattern.to_token_stream()),
                    Check::Format(format) => format!("format {format}"),
                })
                .collect(),
        )
    }

    #[test]
    fn the_common_validations_are_written_with_the_doc_as_the_derive_reads_it() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " # Guests"]),
            parse_quote!(#[doc = "  at most twelve"]),
            parse_quote!(#[schemars(range(min = 1, max = MAX), email)]),
            parse_quote!(#[schemars(length(equal = 3), regex(pattern = r"^a+$"), url)]),
        ];
        assert_eq!(
            written_schema(&attrs).map(|s| s.doc).as_deref(),
            Some("# Guests\n at most twelve")
        );
        assert_eq!(
            checks(&attrs).unwrap(),
            [
                "number minimum 1",
                "number maximum MAX",
                "format email",
                "string minLength 3",
                "string maxLength 3",
                "array minItems 3",
                "array maxItems 3",
                "pattern r\"^a+$\"",
                "format uri",
            ]
        );
        assert_eq!(checks(&[]).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn anything_else_is_left_to_schemars_derive() {
        let derive: [Attribute; 7] = [
            parse_quote!(#[schemars(inner(length(max = 5)))]),
            parse_quote!(#[schemars(range(min = "1"))]),
            parse_quote!(#[schemars(range(min = 1, equal = 2))]),
            parse_quote!(#[schemars(range(min = 1), range(max = 2))]),
            parse_quote!(#[schemars(regex(path = "x"))]),
            parse_quote!(#[schemars(email(message = "x"))]),
            parse_quote!(#[doc = include_str!("doc.md")]),
        ];
        for attr in derive {
            let text = attr.to_token_stream().to_string();
            assert!(checks(&[attr]).is_none(), "{text}");
        }
    }
}

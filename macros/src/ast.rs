//! A typed copy of the annotated fn: its parameters classified by syntax
//! (input, injected, context), with the original kept for spans and for
//! re-emission.

use darling::error::Accumulator;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, FnArg, GenericArgument, Ident, ItemFn, LitStr, Meta, Pat, PathArguments,
    ReturnType, Type, Visibility,
};

pub(crate) struct ToolFn {
    /// The fn as it will be emitted: parameter attributes of ours removed.
    pub item: ItemFn,
    pub vis: Visibility,
    pub ident: Ident,
    /// The doc comment, lines joined; `None` when there is none.
    pub docs: Option<(String, Span)>,
    pub params: Vec<Param>,
    pub output: Output,
}

pub(crate) struct Param {
    pub ident: Ident,
    pub ty: Type,
    pub kind: Kind,
}

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
    pub(crate) fn parse(mut item: ItemFn, errors: &mut Accumulator) -> ToolFn {
        let sig = &item.sig;
        if sig.asyncness.is_none() {
            errors.push(
                darling::Error::custom("a tool is an `async fn`; add `async` before `fn`")
                    .with_span(&sig.fn_token),
            );
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            errors.push(
                darling::Error::custom(
                    "a tool cannot be generic: its schema is fixed at compile time; use concrete types",
                )
                .with_span(&sig.generics),
            );
        }
        if let Some(variadic) = &sig.variadic {
            errors.push(darling::Error::custom("a tool cannot be variadic").with_span(variadic));
        }

        let docs = doc_text(&item.attrs);
        let mut params = Vec::new();
        for arg in item.sig.inputs.iter_mut() {
            match arg {
                FnArg::Receiver(receiver) => errors.push(
                    darling::Error::custom(
                        "a tool is a free `async fn`, not a method; take the service as `Inject<T>` instead of `self`",
                    )
                    .with_span(receiver),
                ),
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
                    errors.push(
                        darling::Error::custom(
                            "a tool's return type is named so its schema can be generated; replace `impl Trait` with a concrete type",
                        )
                        .with_span(ty),
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
            params,
            output,
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
    errors: &mut Accumulator,
) -> (Vec<Attribute>, Option<Param>) {
    let mut kept = Vec::new();
    let mut input = Input::default();
    let mut marked_inject = None;
    for attr in attrs {
        let path = attr.path();
        if path.is_ident("doc") || path.is_ident("schemars") {
            input.field_attrs.push(attr);
        } else if path.is_ident("inject") {
            match &attr.meta {
                Meta::Path(_) => marked_inject = Some(attr.span()),
                _ => errors.push(
                    darling::Error::custom("`#[inject]` takes no arguments").with_span(&attr),
                ),
            }
        } else if path.is_ident("default") {
            match &attr.meta {
                Meta::NameValue(nv) => input.default = Some(nv.value.clone()),
                _ => errors.push(
                    darling::Error::custom("write `#[default = expr]`, e.g. `#[default = 10]`")
                        .with_span(&attr),
                ),
            }
        } else if path.is_ident("rename") {
            match &attr.meta {
                Meta::NameValue(syn::MetaNameValue {
                    value:
                        Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(name),
                            ..
                        }),
                    ..
                }) => input.rename = Some(name.clone()),
                _ => errors.push(
                    darling::Error::custom("write `#[rename = \"fieldName\"]`").with_span(&attr),
                ),
            }
        } else if path.is_ident("serde") {
            errors.push(
                darling::Error::custom(
                    "`#[serde]` is not supported on tool parameters; use `#[rename = \"...\"]` or `#[default = ...]`, which keep the schema and the parser in agreement",
                )
                .with_span(&attr),
            );
        } else if ["allow", "warn", "deny", "expect", "cfg_attr"]
            .iter()
            .any(|lint| path.is_ident(lint))
        {
            kept.push(attr);
        } else {
            errors.push(
                darling::Error::custom(
                    "unsupported attribute; tool parameters take doc comments, `#[inject]`, `#[default = ...]`, `#[rename = \"...\"]` and `#[schemars(...)]`",
                )
                .with_span(&attr),
            );
        }
    }

    let ident = match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
        _ => {
            errors.push(
                darling::Error::custom(
                    "a tool parameter is a plain name (its field name in the schema); destructure it inside the body",
                )
                .with_span(pat),
            );
            return (kept, None);
        }
    };

    let injected = marked_inject.is_some() || last_segment_is(ty, "Inject");
    let context = !injected && last_segment_is(ty, "Context");
    if let Some(span) = marked_inject.filter(|_| last_segment_is(ty, "Context")) {
        errors.push(
            darling::Error::custom("a `Context<C>` parameter is not injected; remove `#[inject]`")
                .with_span(&span),
        );
    }
    if injected || context {
        let input_only = input.default.is_some()
            || input.rename.is_some()
            || input.field_attrs.iter().any(|a| a.path().is_ident("schemars"));
        if input_only {
            errors.push(
                darling::Error::custom(
                    "`#[default]`, `#[rename]` and `#[schemars]` describe input fields; this parameter is not an input",
                )
                .with_span(pat),
            );
        }
    }
    let kind = if injected {
        Kind::Inject
    } else if context {
        Kind::Context
    } else {
        Kind::Input(input)
    };

    let mut valid = true;
    if contains_impl_trait(ty) {
        errors.push(
            darling::Error::custom(
                "a tool parameter has a concrete type so its schema can be generated; replace `impl Trait`",
            )
            .with_span(ty),
        );
        valid = false;
    } else if let Type::Reference(reference) = ty {
        let message = if is_str(&reference.elem) {
            "inputs are owned; use String".to_owned()
        } else {
            "inputs are owned: take the value, not a reference (remove the `&`)".to_owned()
        };
        let message = match kind {
            Kind::Input(_) => message,
            _ => "injected and context parameters are owned; use `Inject<T>` or `Context<C>` without `&`".to_owned(),
        };
        errors.push(darling::Error::custom(message).with_span(ty));
        valid = false;
    }
    let param = valid.then(|| Param {
        ident,
        ty: ty.clone(),
        kind,
    });
    (kept, param)
}

fn last_segment_is(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(p) if p.qself.is_none() => p
            .path
            .segments
            .last()
            .is_some_and(|s| s.ident == name && matches!(s.arguments, PathArguments::AngleBracketed(_))),
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
/// puts after `///`, joined with newlines, surrounding blank lines removed.
pub(crate) fn doc_text(attrs: &[Attribute]) -> Option<(String, Span)> {
    let mut lines = Vec::new();
    let mut span = None;
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            span.get_or_insert(attr.span());
            let value = s.value();
            for line in value.lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let span = span?;
    Some((lines.join("\n").trim().to_owned(), span))
}

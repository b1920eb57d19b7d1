//! The argument struct a tool's inputs become, and the fns its
//! `#[default = expr]`s are read through.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use super::hygiene::{Krate, allow_lints, anchor, spanned};
use super::schema::schema_fields;
use crate::ast::ToolFn;

/// The generated argument struct. With `derives` off (the fallback), it is a
/// plain struct so that hooks naming it still type-check.
pub(crate) fn args_struct(
    tool: &ToolFn,
    args: &Ident,
    krate: &Krate,
    derives: bool,
) -> TokenStream {
    let at = anchor(tool);
    let vis = &tool.vis;
    let doc = spanned(struct_doc(tool), at);
    // schemars' derive only where a parameter has `#[schemars(...)]`
    // items the written impl does not read (or a doc comment that is not a
    // plain string; see `schema_fields`); otherwise `schema_impl` writes
    // the impl. The derive reads the `#[serde]`
    // attributes below (names, defaults, closed object).
    let derive_schema = derives && schema_fields(tool).is_none();
    let fields = tool.inputs().map(|(p, input)| {
        let ident = &p.ident;
        let ty = &p.ty;
        // Without schemars' derive, its `#[schemars]` attributes would be
        // unknown; the written impl has read them.
        let attrs: Vec<_> = input
            .field_attrs
            .iter()
            .filter(|a| derives && (derive_schema || !a.path().is_ident("schemars")))
            .collect();
        let mut serde_attrs = Vec::new();
        if derive_schema {
            if let Some(rename) = &input.rename {
                serde_attrs.push(quote_spanned!(at=> #[serde(rename = #rename)]));
            }
            if input.default.is_some() {
                let path = spanned(format!("{args}::{}", default_fn(ident, at)), at);
                serde_attrs.push(quote_spanned!(at=> #[serde(default = #path)]));
            }
            if input.secret {
                let key = spanned("writeOnly", at);
                serde_attrs.push(quote_spanned!(at=> #[schemars(extend(#key = true))]));
            }
        }
        // A field is documented by its parameter's doc comment, which is
        // also its schema description; an undocumented one stays so.
        let undocumented = (!input.field_attrs.iter().any(|a| a.path().is_ident("doc")))
            .then(|| quote_spanned!(at=> #[allow(missing_docs)]));
        quote_spanned! {at=>
            #(#attrs)*
            #undocumented
            #(#serde_attrs)*
            #vis #ident: #ty,
        }
    });
    let derive = derive_schema.then(|| {
        let serde = spanned(krate.private_text("serde"), at);
        let schemars = spanned(krate.private_text("schemars"), at);
        let krate = krate.at(at);
        quote_spanned! {at=>
            #[derive(#krate::__private::schemars::JsonSchema)]
            #[serde(crate = #serde, deny_unknown_fields)]
            #[schemars(crate = #schemars)]
        }
    });
    let allow = allow_lints(at);
    quote_spanned! {at=>
        #[doc = #doc]
        #derive
        #allow
        #vis struct #args {
            #(#fields)*
        }
    }
}

/// The functions `#[serde(default = ...)]` calls.
pub(super) fn default_fns(tool: &ToolFn, args: &Ident) -> TokenStream {
    let at = anchor(tool);
    let fns: Vec<_> = tool
        .inputs()
        .filter_map(|(p, input)| {
            let expr = input.default.as_ref()?;
            let ty = &p.ty;
            let name = default_fn(&p.ident, at);
            Some(quote_spanned! {expr.span()=>
                #[doc(hidden)]
                fn #name() -> #ty {
                    #expr
                }
            })
        })
        .collect();
    if fns.is_empty() {
        return TokenStream::new();
    }
    let allow = allow_lints(at);
    quote_spanned! {at=>
        #allow
        impl #args {
            #(#fns)*
        }
    }
}

/// The argument struct's doc comment, which its schema also carries.
pub(super) fn struct_doc(tool: &ToolFn) -> String {
    format!("The arguments of the [`{}`] tool.", tool.ident)
}

pub(super) fn default_fn(ident: &Ident, at: Span) -> Ident {
    format_ident!(
        "__toolwright_default_{}",
        crate::ast::unraw(ident),
        span = at
    )
}

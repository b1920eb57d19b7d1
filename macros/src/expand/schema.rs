//! `JsonSchema` for the argument struct, where it is written rather than
//! derived.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::Ident;
use syn::spanned::Spanned;

use super::args::{default_fn, struct_doc};
use super::hygiene::{Krate, allow_lints, anchor, spanned};
use crate::ast::{Check, ToolFn, WrittenSchema};

/// `JsonSchema` for the argument struct, written out as schemars' derive
/// would generate it (same schema, same order of keys), for a tool whose
/// inputs have no `#[schemars(...)]` attributes but the common
/// validations (see [`schema_fields`]): a derive's output is checked again
/// after any edit above it (see [`anchor`]). Empty when the derive is
/// used instead.
pub(super) fn schema_impl(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
    let Some(fields) = schema_fields(tool) else {
        return TokenStream::new();
    };
    let at = anchor(tool);
    let krate = krate.at(at);
    let name = spanned(args.to_string(), at);
    // The struct's doc comment, as the derive would read it.
    let description = spanned(struct_doc(tool), at);
    let properties = tool.inputs().zip(&fields).map(|((p, input), field)| {
        let ty = &p.ty;
        let doc = &field.doc;
        let checks = field.checks.iter().map(|check| match check {
            Check::Bound {
                of_type,
                key,
                value,
            } => {
                let (of_type, key) = (spanned(of_type, at), spanned(key, at));
                quote_spanned!(at=> #krate::__private::bound(&mut __field, #of_type, #key, #value);)
            }
            Check::Pattern(pattern) => {
                let (of_type, key) = (spanned("string", at), spanned("pattern", at));
                quote_spanned! {at=>
                    #krate::__private::bound(&mut __field, #of_type, #key, (#pattern).to_string());
                }
            }
            Check::Format(format) => {
                let format = spanned(format, at);
                quote_spanned!(at=> #krate::__private::format(&mut __field, #format);)
            }
        });
        let wire = spanned(p.wire_name(), at);
        let (title, field_description) = title_and_description(doc);
        let (title, field_description) = (spanned(title, at), spanned(field_description, at));
        // Optional when read (not when written): with a default, or as an `Option`.
        let (optional, default) = match &input.default {
            Some(_) => {
                let default = default_fn(&p.ident, at);
                (
                    quote_spanned!(at=> __generator.contract().is_deserialize()),
                    quote_spanned! {at=>
                        #krate::__private::to_value(&#args::#default()).ok()
                    },
                )
            }
            None => (
                quote_spanned! {at=>
                    __generator.contract().is_deserialize()
                        && (&&#krate::__private::OptionProbe::<#ty>(::core::marker::PhantomData))
                            .is_option()
                },
                quote_spanned!(at=> ::core::option::Option::None),
            ),
        };
        let subschema = quote_spanned! {ty.span()=>
            #krate::__private::field_schema::<#ty>(__generator)
        };
        let mutable = (!field.checks.is_empty()).then(|| quote_spanned!(at=> mut));
        // After the property is complete, as the derive applies `extend`.
        let secret = input
            .secret
            .then(|| quote_spanned!(at=> #krate::__private::write_only(&mut __schema, #wire);));
        quote_spanned! {at=>
            {
                let #mutable __field = #subschema;
                #(#checks)*
                #krate::__private::object_property(
                    &mut __schema,
                    #wire,
                    #optional,
                    __field,
                    #title,
                    #field_description,
                    #default,
                );
                #secret
            }
        }
    });
    let allow = allow_lints(at);
    quote_spanned! {at=>
        #[automatically_derived]
        #allow
        impl #krate::__private::schemars::JsonSchema for #args {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(#name)
            }

            fn schema_id() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::any::type_name::<Self>())
            }

            fn json_schema(
                __generator: &mut #krate::__private::schemars::SchemaGenerator,
            ) -> #krate::__private::schemars::Schema {
                <#krate::__private::Runtime as #krate::__private::SchemaFields<#args>>::json_schema(
                    __generator,
                )
            }
        }

        #[automatically_derived]
        #allow
        impl #krate::__private::SchemaFields<#args> for #krate::__private::Runtime {
            fn json_schema(
                __generator: &mut #krate::__private::schemars::SchemaGenerator,
            ) -> #krate::__private::schemars::Schema {
                #[allow(unused_imports)]
                use #krate::__private::{IsOption as _, NotOption as _};
                let mut __schema = #krate::__private::object_schema();
                #(#properties)*
                #krate::__private::describe(&mut __schema, "", #description);
                __schema
            }
        }
    }
}

/// Every input's [`WrittenSchema`], or `None` when schemars' derive must
/// be used for the struct.
pub(super) fn schema_fields(tool: &ToolFn) -> Option<Vec<&WrittenSchema>> {
    tool.inputs()
        .map(|(_, input)| input.written_schema.as_ref())
        .collect()
}

/// A doc comment's schema `title` and `description`, split as schemars
/// does: a first line that is a Markdown heading is the title.
fn title_and_description(doc: &str) -> (&str, &str) {
    let doc = doc.trim_ascii();
    if doc.starts_with('#') {
        let end = doc.find('\n').unwrap_or(doc.len());
        (
            doc[..end].trim_start_matches('#').trim_ascii(),
            doc[end..].trim_ascii(),
        )
    } else {
        ("", doc)
    }
}

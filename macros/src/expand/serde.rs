//! The argument struct's `Serialize` and `Deserialize`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use super::args::default_fn;
use super::hygiene::{Krate, allow_lints, anchor, spanned};
use crate::ast::ToolFn;

/// `Serialize` and `Deserialize` for the argument struct, written out
/// rather than derived (a derive's output is checked again after any edit
/// above it; see [`anchor`]). Deserialization
/// accepts exactly what `#[derive(Deserialize)]` with
/// `deny_unknown_fields` and the fields' `rename` and `default` accepted
/// from an object, with the same error messages; an array, which the
/// derive also took, is refused. The code of both is on the runtime's
/// `Runtime` (`ReadFields`, `WriteFields`), so that an incremental build
/// compiles it in a codegen unit an edit to a tool's body leaves alone;
/// the struct's impls call it.
///
/// Returns the impls, and the `__deserialize` of the `Tool` impl, which
/// starts the visitor: `Deserialize` calls it with no place to note the
/// field that failed, the executor with one.
pub(super) fn serde_impls(
    tool: &ToolFn,
    args: &Ident,
    krate: &Krate,
) -> (TokenStream, TokenStream) {
    let at = anchor(tool);
    let inputs: Vec<_> = tool.inputs().collect();
    let count = inputs.len();
    let len = spanned(count, at);
    let positions: Vec<TokenStream> = (0..count).map(|i| spanned(i, at)).collect();
    let struct_name = args.to_string();
    let expecting = spanned(format!("struct {struct_name}"), at);
    let struct_name = spanned(struct_name, at);
    let wire: Vec<TokenStream> = inputs
        .iter()
        .map(|(p, _)| spanned(p.wire_name(), at))
        .collect();
    let idents: Vec<&Ident> = inputs.iter().map(|(p, _)| &p.ident).collect();
    let types: Vec<&Type> = inputs.iter().map(|(p, _)| &p.ty).collect();
    let slots: Vec<Ident> = (0..count)
        .map(|i| format_ident!("__field{}", i, span = at))
        .collect();
    let arms = slots
        .iter()
        .zip(&wire)
        .zip(&types)
        .zip(&positions)
        .map(|(((slot, wire), ty), index)| {
            // On the parameter's type: a type that cannot be deserialized is
            // reported there.
            let read = quote_spanned!(ty.span()=> __map.next_value::<#ty>());
            let krate = krate.at(at);
            quote_spanned! {at=>
                #index => {
                    if #slot.is_some() {
                        return ::core::result::Result::Err(<__A::Error as #krate::__private::serde::de::Error>::duplicate_field(#wire));
                    }
                    #slot = ::core::option::Option::Some(match #read {
                        ::core::result::Result::Ok(__value) => __value,
                        ::core::result::Result::Err(__error) => {
                            return ::core::result::Result::Err(#krate::__private::noted(__failed, #wire, __error));
                        }
                    });
                }
            }
        });
    let values = inputs
        .iter()
        .zip(&slots)
        .zip(&wire)
        .map(|(((p, input), slot), wire)| {
            let ident = &p.ident;
            let ty = &p.ty;
            let missing = match &input.default {
                Some(_) => {
                    let default = default_fn(ident, at);
                    quote_spanned!(at=> #args::#default())
                }
                None => {
                    let krate = krate.at(ty.span());
                    quote_spanned! {ty.span()=>
                        #krate::__private::missing_field::<#ty, _>(#wire)?
                    }
                }
            };
            quote_spanned! {at=>
                #ident: match #slot {
                    ::core::option::Option::Some(__value) => __value,
                    ::core::option::Option::None => #missing,
                }
            }
        });
    let allow = allow_lints(at);
    let krate = krate.at(at);
    let impls = quote_spanned! {at=>
        #[automatically_derived]
        #allow
        impl #krate::__private::serde::Serialize for #args {
            fn serialize<__S: #krate::__private::serde::Serializer>(
                &self,
                __serializer: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                <#krate::__private::Runtime as #krate::__private::WriteFields<#args>>::serialize(
                    self,
                    __serializer,
                )
            }
        }

        #[automatically_derived]
        #allow
        impl #krate::__private::WriteFields<#args> for #krate::__private::Runtime {
            fn serialize<__S: #krate::__private::serde::Serializer>(
                __args: &#args,
                __serializer: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                let mut __state = __serializer.serialize_struct(#struct_name, #len)?;
                #(#krate::__private::serde::ser::SerializeStruct::serialize_field(
                    &mut __state,
                    #wire,
                    &__args.#idents,
                )?;)*
                #krate::__private::serde::ser::SerializeStruct::end(__state)
            }
        }

        #[automatically_derived]
        #allow
        impl<'de> #krate::__private::serde::Deserialize<'de> for #args {
            fn deserialize<__D: #krate::__private::serde::Deserializer<'de>>(
                __deserializer: __D,
            ) -> ::core::result::Result<Self, __D::Error> {
                <Self as #krate::Tool>::__deserialize(__deserializer, ::core::option::Option::None)
            }
        }
    };
    // On the runtime's `Runtime`: compiled in a codegen unit of the runtime's,
    // not in the one every tool body of the module is in.
    let read_fields = quote_spanned! {at=>
        #[automatically_derived]
        #allow
        impl #krate::__private::ReadFields<#args> for #krate::__private::Runtime {
            const EXPECTING: &'static str = #expecting;
            const FIELDS: &'static [&'static str] = &[#(#wire),*];
            fn field_index(__key: &str) -> ::core::option::Option<usize> {
                match __key {
                    #(#wire => ::core::option::Option::Some(#positions),)*
                    _ => ::core::option::Option::None,
                }
            }
            #[inline]
            fn visit_map<'de, __A: #krate::__private::serde::de::MapAccess<'de>>(
                mut __map: __A,
                __failed: #krate::__private::FailedField<'_>,
            ) -> ::core::result::Result<#args, __A::Error> {
                #(let mut #slots: ::core::option::Option<#types> = ::core::option::Option::None;)*
                while let ::core::option::Option::Some(__key) =
                    __map.next_key_seed(#krate::__private::FieldSeed {
                        fields: <Self as #krate::__private::ReadFields<#args>>::FIELDS,
                        index: <Self as #krate::__private::ReadFields<#args>>::field_index,
                    })?
                {
                    match __key {
                        #(#arms)*
                        // `FieldSeed` yields only the indices above.
                        _ => {
                            let #krate::__private::serde::de::IgnoredAny =
                                __map.next_value()?;
                        }
                    }
                }
                ::core::result::Result::Ok(#args { #(#values),* })
            }
        }
    };
    let deserialize_fn = quote_spanned! {at=>
        fn __deserialize<'de, __D: #krate::__private::serde::Deserializer<'de>>(
            __deserializer: __D,
            __failed: #krate::__private::FailedField<'_>,
        ) -> ::core::result::Result<Self, __D::Error> {
            __deserializer.deserialize_struct(
                #struct_name,
                <#krate::__private::Runtime as #krate::__private::ReadFields<#args>>::FIELDS,
                #krate::__private::fields::<#args>(__failed),
            )
        }
    };
    let impls = quote_spanned! {at=>
        #impls

        #read_fields
    };
    (impls, deserialize_fn)
}

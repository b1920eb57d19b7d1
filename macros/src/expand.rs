//! Code generation for a checked tool: the argument struct, its `Tool`
//! impl, the registration, and the original fn.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericArgument, Ident, Path, PathArguments, Type};

use crate::ast::{Check, Kind, Output, ToolFn, WrittenSchema};
use crate::attr::Effect;
use crate::valid::Spec;

pub(crate) fn expand(tool: &ToolFn, spec: &Spec, krate: &Krate) -> TokenStream {
    let at = anchor(tool);
    let item = &tool.item;
    let args = &spec.args;
    let fn_ident = &tool.ident;

    let args_struct = args_struct(tool, args, krate, true);
    let serde_impls = serde_impls(tool, args, krate);
    let debug_impl = debug_impl(tool, args, krate);
    let schema_impl = schema_impl(tool, args, krate);
    let defaults = default_fns(tool, args);

    // Only the hooks the pipeline will ask for; the trait's defaults stand
    // in for the others (and refuse, should they ever be asked).
    let authorize = spec.authorize.as_ref().map(|path| {
        hook_fn(
            quote_spanned!(at=> __authorize),
            path,
            quote_spanned!(at=> Authorize),
            at,
            krate,
        )
    });
    let approve = match (spec.effect, &spec.approve) {
        (Effect::Read, _) | (_, None) => None,
        (_, Some(path)) => Some(hook_fn(
            quote_spanned!(at=> __approve),
            path,
            quote_spanned!(at=> Approve),
            at,
            krate,
        )),
    };
    let run = run_body(tool, args, krate);

    let output_ty = match &tool.output {
        Output::Unit => quote_spanned!(at=> ()),
        Output::Plain(ty) => quote_spanned!(ty.span()=> #ty),
        Output::Fallible(ty) => {
            let krate = krate.at(ty.span());
            quote_spanned!(ty.span()=> <#ty as #krate::__private::Fallible>::Ok)
        }
    };

    let injected: Vec<_> = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, Kind::Inject))
        .map(|p| &p.ty)
        .collect();
    // The one check of each injected type, on the type; the other uses go
    // through `Injector`, which falls back silently instead of repeating it.
    let allow = allow_lints(at);
    let injectable = injected.iter().map(|ty| {
        let krate = krate.at(ty.span());
        quote_spanned! {ty.span()=>
            #allow
            const _: () = #krate::__private::assert_injectable::<#ty>();
        }
    });

    // On the fn's name: a body whose future is not `Send` is reported
    // there, not on the whole attribute.
    let fn_span = fn_ident.span();
    let run_future = {
        let krate = krate.at(fn_span);
        quote_spanned! {fn_span=>
            impl ::core::future::Future<
                Output = ::core::result::Result<Self::Output, #krate::__private::CallError>,
            > + ::core::marker::Send + '__a
        }
    };
    let location = {
        let krate = krate.at(fn_span);
        quote_spanned! {fn_span=>
            #krate::__private::Location {
                file: ::core::file!(),
                line: ::core::line!(),
                module_path: ::core::module_path!(),
            }
        }
    };

    // Everything below is spanned at the fn's name.
    let krate = krate.at(at);

    let key = spanned(&spec.key, at);
    let name = spanned(&spec.name, at);
    let description = spanned(&spec.description, at);
    let title = match &spec.title {
        Some(title) => {
            let title = spanned(title, at);
            quote_spanned!(at=> ::core::option::Option::Some(#title))
        }
        None => quote_spanned!(at=> ::core::option::Option::None),
    };
    let effect = match spec.effect {
        Effect::Read => quote_spanned!(at=> #krate::__private::Effect::Read),
        Effect::Write => quote_spanned!(at=> #krate::__private::Effect::Write),
        Effect::Destructive => quote_spanned!(at=> #krate::__private::Effect::Destructive),
    };
    let idempotent = spanned(spec.idempotent, at);
    let open_world = spanned(spec.open_world, at);
    let timeout = match spec.timeout_ms {
        Some(ms) => {
            let ms = spanned(ms, at);
            quote_spanned!(at=> ::core::option::Option::Some(#krate::__private::Duration::from_millis(#ms)))
        }
        None => quote_spanned!(at=> ::core::option::Option::None),
    };
    let injects = spanned(
        tool.params.iter().any(|p| matches!(p.kind, Kind::Inject)),
        at,
    );
    let public = spanned(spec.authorize.is_none(), at);

    let requirements = injected.iter().map(|ty| {
        quote_spanned! {at=>
            (&&#krate::__private::Injector::<#ty>(::core::marker::PhantomData))
                .requirements(__out);
        }
    });

    let requirements = (!injected.is_empty()).then(|| {
        quote_spanned! {at=>
            fn __requirements(__out: &mut ::std::vec::Vec<#krate::__private::Requirement>) {
                #[allow(unused_imports)]
                use #krate::__private::{InjectorFallback as _, InjectorResolve as _};
                #(#requirements)*
            }
        }
    });

    // The fn last, after the items generated for it: the order clippy's
    // `arbitrary_source_item_ordering` expects by default.
    quote_spanned! {at=>
        #args_struct

        #serde_impls

        #debug_impl

        #schema_impl

        #defaults

        #[automatically_derived]
        #allow
        impl #krate::Tool for #args {
            const KEY: &'static str = #key;
            const NAME: &'static str = #name;
            const TITLE: ::core::option::Option<&'static str> = #title;
            const DESCRIPTION: &'static str = #description;
            const EFFECT: #krate::__private::Effect = #effect;
            const IDEMPOTENT: bool = #idempotent;
            const OPEN_WORLD: bool = #open_world;
            const TIMEOUT: ::core::option::Option<#krate::__private::Duration> = #timeout;
            const LOCATION: #krate::__private::Location = #location;
            #[doc(hidden)]
            const INJECTS: bool = #injects;
            #[doc(hidden)]
            const PUBLIC: bool = #public;

            type Output = #output_ty;

            fn __input_schema() -> #krate::__private::serde_json::Value {
                #krate::__private::input_schema(
                    <Self as #krate::__private::schemars::JsonSchema>::json_schema,
                )
            }

            fn __output_schema() -> ::core::option::Option<#krate::__private::serde_json::Value> {
                #[allow(unused_imports)]
                use #krate::__private::{OutputWithSchema as _, OutputWithoutSchema as _};
                (&&#krate::__private::OutputProbe::<<Self as #krate::Tool>::Output>(
                    ::core::marker::PhantomData,
                ))
                    .output_schema()
            }

            #requirements

            #authorize

            #approve

            fn __run<'__a>(
                self,
                __ctx: #krate::__private::ErasedContext<'__a>,
                __scope: ::core::option::Option<&'__a #krate::__private::Scope>,
            ) -> #run_future {
                #run
            }
        }

        #(#injectable)*

        #krate::__private::inventory::submit! {
            #krate::__private::Registration::of::<#args>()
        }

        #item
    }
}

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

/// `Serialize` and `Deserialize` for the argument struct, written out
/// rather than derived (a derive's output is checked again after any edit
/// above it; see [`anchor`]). Deserialization
/// accepts exactly what `#[derive(Deserialize)]` with
/// `deny_unknown_fields` and the fields' `rename` and `default` accepted
/// from an object, with the same error messages; an array, which the
/// derive also took, is refused.
fn serde_impls(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
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
                            return ::core::result::Result::Err(#krate::__private::noted(#wire, __error));
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
    quote_spanned! {at=>
        #[automatically_derived]
        #allow
        impl #krate::__private::serde::Serialize for #args {
            fn serialize<__S: #krate::__private::serde::Serializer>(
                &self,
                __serializer: __S,
            ) -> ::core::result::Result<__S::Ok, __S::Error> {
                let mut __state = __serializer.serialize_struct(#struct_name, #len)?;
                #(#krate::__private::serde::ser::SerializeStruct::serialize_field(
                    &mut __state,
                    #wire,
                    &self.#idents,
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
                const FIELDS: &[&str] = &[#(#wire),*];
                fn __field_index(__key: &str) -> ::core::option::Option<usize> {
                    match __key {
                        #(#wire => ::core::option::Option::Some(#positions),)*
                        _ => ::core::option::Option::None,
                    }
                }
                struct __Visitor;
                impl<'de> #krate::__private::serde::de::Visitor<'de> for __Visitor {
                    type Value = #args;
                    fn expecting(
                        &self,
                        __f: &mut ::core::fmt::Formatter<'_>,
                    ) -> ::core::fmt::Result {
                        __f.write_str(#expecting)
                    }
                    #[inline]
                    fn visit_map<__A: #krate::__private::serde::de::MapAccess<'de>>(
                        self,
                        mut __map: __A,
                    ) -> ::core::result::Result<#args, __A::Error> {
                        #(let mut #slots: ::core::option::Option<#types> = ::core::option::Option::None;)*
                        while let ::core::option::Option::Some(__key) =
                            __map.next_key_seed(#krate::__private::FieldSeed {
                                fields: FIELDS,
                                index: __field_index,
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
                __deserializer.deserialize_struct(#struct_name, FIELDS, __Visitor)
            }
        }
    }
}

/// `Debug` for the argument struct: its fields as a caller sends them (see
/// `debug_args`), with no `Debug` bound on their types (a derive cannot
/// have one: the struct is not generic).
fn debug_impl(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
    let at = anchor(tool);
    let allow = allow_lints(at);
    let struct_name = spanned(args.to_string(), at);
    let krate = krate.at(at);
    quote_spanned! {at=>
        #[automatically_derived]
        #allow
        impl ::core::fmt::Debug for #args {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #krate::__private::debug_args(self, #struct_name, __f)
            }
        }
    }
}

/// The path the generated code reaches toolwright by: `::toolwright`, or
/// the `crate = path` of a renamed dependency or a facade crate.
pub(crate) struct Krate {
    path: TokenStream,
}

impl Krate {
    pub(crate) fn new(path: Option<&Path>) -> Krate {
        let path = match path {
            Some(path) => path.to_token_stream(),
            None => quote!(::toolwright),
        };
        Krate { path }
    }

    /// The path with every token at `span`, the span of the code around
    /// it, so that an error there points where it would without `crate`.
    pub(crate) fn at(&self, span: Span) -> TokenStream {
        spanned(&self.path, span)
    }

    /// The path to `module` under `__private`, as the string serde's and
    /// schemars' `crate = "..."` take.
    pub(crate) fn private_text(&self, module: &str) -> String {
        let path = self.path.to_string().replace(' ', "");
        format!("{path}::__private::{module}")
    }
}

/// Where the code generated for `tool` says it comes from: the fn's name.
///
/// Not the attribute (`Span::call_site()`): rustc hashes a macro's own
/// spans by their absolute position, so every item spanned at an
/// attribute is checked again when an edit above the tool moves it, even
/// by a character. Spans of the user's own tokens are hashed relative to
/// their item, so code spanned at the fn's name is checked again only when
/// the tool itself changes (see BENCHMARKS.md, "Compile cost of tools").
/// Tokens the user wrote (types, paths, expressions) keep their spans.
fn anchor(tool: &ToolFn) -> Span {
    tool.ident.span()
}

/// The lints allowed on every item `#[tool]` generates (not on the fn,
/// which is the user's). The generated code is spanned at the fn's name
/// (see [`anchor`]), so rustc and clippy lint it as the user's own code,
/// with the user's lint levels; a crate that denies a restriction lint, or
/// `missing_copy_implementations`, would otherwise be refused for code it
/// cannot change.
///
/// Only what the generated code can trip: rustc refuses an `allow` under a
/// `forbid` of the same lint (a group's only warns), so allowing a lint
/// the code meets would break a crate that forbids it. The other lints
/// are met, and `tests/tests/lints.rs` and the `lint_clean` UI case deny
/// them around tools.
fn allow_lints(at: Span) -> TokenStream {
    quote_spanned! {at=>
        #[allow(
            missing_copy_implementations,
            clippy::all,
            clippy::nursery,
            clippy::pedantic,
            clippy::restriction,
        )]
    }
}

/// `value`'s tokens (a literal, `true`, a path), spanned at `at`: quote
/// gives the tokens of a value `Span::call_site()`, which `anchor` avoids.
fn spanned(value: impl ToTokens, at: Span) -> TokenStream {
    value
        .into_token_stream()
        .into_iter()
        .map(|mut token| {
            token.set_span(at);
            token
        })
        .collect()
}

/// The argument struct's doc comment, which its schema also carries.
fn struct_doc(tool: &ToolFn) -> String {
    format!("The arguments of the [`{}`] tool.", tool.ident)
}

fn default_fn(ident: &Ident, at: Span) -> Ident {
    format_ident!(
        "__toolwright_default_{}",
        crate::ast::unraw(ident),
        span = at
    )
}

/// Every input's [`WrittenSchema`], or `None` when schemars' derive must
/// be used for the struct.
fn schema_fields(tool: &ToolFn) -> Option<Vec<&WrittenSchema>> {
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

/// `JsonSchema` for the argument struct, written out as schemars' derive
/// would generate it (same schema, same order of keys), for a tool whose
/// inputs have no `#[schemars(...)]` attributes but the common
/// validations (see [`schema_fields`]): a derive's output is checked again
/// after any edit above it (see [`anchor`]). Empty when the derive is
/// used instead.
fn schema_impl(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
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
        let subschema = quote_spanned!(ty.span()=> __generator.subschema_for::<#ty>());
        let mutable = (!field.checks.is_empty()).then(|| quote_spanned!(at=> mut));
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

/// The functions `#[serde(default = ...)]` calls.
fn default_fns(tool: &ToolFn, args: &Ident) -> TokenStream {
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

/// `__authorize` or `__approve` (`name`) calling the hook at `path`: it
/// downcasts the context to the type the hook takes (inferred from its
/// signature) and calls it.
fn hook_fn(
    name: TokenStream,
    path: &Path,
    kind: TokenStream,
    at: Span,
    krate: &Krate,
) -> TokenStream {
    // The call is on the hook's path, so that a hook of the wrong shape is
    // reported there, with the signature rustc expected.
    let body = {
        let krate = krate.at(path.span());
        quote_spanned! {path.span()=>
            #krate::__private::call_hook::<_, Self, _, _>(
                __ctx,
                __call,
                #path,
                <Self as #krate::Tool>::KEY,
                #krate::__private::HookKind::#kind,
            )
        }
    };
    let krate = krate.at(at);
    quote_spanned! {at=>
        fn #name<'__a>(
            __ctx: #krate::__private::ErasedContext<'__a>,
            __call: &'__a #krate::Invocation<'__a, Self>,
        ) -> #krate::__private::HookCall<
            impl ::core::marker::Send + '__a,
            impl #krate::__private::Waits,
        > {
            #body
        }
    }
}

/// The body of `__run`: take the inputs apart, resolve injected and context
/// parameters, call the fn, map its result.
fn run_body(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
    let at = anchor(tool);
    let fn_ident = &tool.ident;
    let inputs = tool.inputs().map(|(p, _)| &p.ident);
    let resolve = tool.params.iter().map(|p| {
        let ident = &p.ident;
        let ty = &p.ty;
        let krate = krate.at(ty.span());
        match p.kind {
            Kind::Input(_) => quote_spanned!(at=> ),
            Kind::Inject => quote_spanned! {ty.span()=>
                let #ident = (&&#krate::__private::Injector::<#ty>(::core::marker::PhantomData))
                    .resolve(__scope, <Self as #krate::Tool>::KEY)
                    .await?;
            },
            Kind::Context => quote_spanned! {ty.span()=>
                let #ident = <#ty as #krate::__private::FromContext>::from_context(
                    __ctx,
                    <Self as #krate::Tool>::KEY,
                )?;
            },
        }
    });
    let call_args = tool.params.iter().map(|p| &p.ident);
    // Through a binding made before the parameters are: a parameter named
    // like the fn (`async fn user(user: Inject<User>)`) would shadow it.
    let call = quote_spanned!(at=> __toolwright_fn(#(#call_args),*));
    let inputs_only = tool.params.iter().all(|p| matches!(p.kind, Kind::Input(_)));
    let future = match &tool.output {
        // Nothing to resolve or map: the fn's own future, its output in
        // `Ok`, with no `async` block (one state machine less per tool).
        Output::Unit | Output::Plain(_) if inputs_only => {
            let krate = krate.at(fn_ident.span());
            quote_spanned! {fn_ident.span()=>
                #krate::__private::infallible(#call)
            }
        }
        output => {
            let result = match output {
                Output::Fallible(ty) => {
                    // A bad error type is reported on the `E` of `Result<T, E>`
                    // (or on the whole type when it is an alias such as `io::Result<T>`).
                    let error_ty = result_error_type(ty).unwrap_or(ty);
                    let returned = over_tokens(quote_spanned!(at=> __returned), error_ty);
                    let krate = krate.at(error_ty.span());
                    quote_spanned! {error_ty.span()=>
                        let __returned = #call.await;
                        #krate::__private::fallible_output(#returned, <Self as #krate::Tool>::KEY)
                    }
                }
                _ => quote_spanned!(at=> ::core::result::Result::Ok(#call.await)),
            };
            let krate = krate.at(fn_ident.span());
            quote_spanned! {fn_ident.span()=>
                {
                    #[allow(unused_imports)]
                    use #krate::__private::{InjectorFallback as _, InjectorResolve as _};
                    async move {
                        #(#resolve)*
                        #result
                    }
                }
            }
        }
    };
    // Registering a deprecated fn as a tool is not a use of it to warn
    // about (its callers are still warned). Only then: an `allow` under a
    // crate's `forbid(deprecated)` would be an error of its own.
    let deprecated = tool
        .item
        .attrs
        .iter()
        .any(|attr| attr.path().is_ident("deprecated"))
        .then(|| quote_spanned!(at=> #[allow(deprecated)]));
    quote_spanned! {at=>
        #deprecated
        let __toolwright_fn = #fn_ident;
        let #args { #(#inputs,)* } = self;
        let _ = (&__ctx, &__scope);
        #future
    }
}

/// `E` in a return type written `...Result<T, E>`.
fn result_error_type(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else {
        return None;
    };
    let PathArguments::AngleBracketed(args) = &path.path.segments.last()?.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    });
    let _ok = types.next()?;
    types.next()
}

/// `expr` as an expression whose span runs over every token of `over`, so
/// that rustc underlines all of `over` when it reports a bound on `expr`.
fn over_tokens(expr: TokenStream, over: &impl ToTokens) -> TokenStream {
    let tokens: Vec<TokenTree> = over.to_token_stream().into_iter().collect();
    let (Some(first), Some(last)) = (tokens.first(), tokens.last()) else {
        return expr;
    };
    let mut group = Group::new(Delimiter::Parenthesis, expr);
    group.set_span(last.span());
    let mut out = quote_spanned!(first.span()=> ::core::convert::identity);
    out.extend([TokenTree::Group(group)]);
    out
}

//! Code generation for a checked tool, one file per thing generated: the
//! argument struct (`args`), its serde impls (`serde`), its schema
//! (`schema`), its `Debug` (`debug`), the hooks and the body of its `Tool`
//! impl (`call`); here, the `Tool` impl and the registration put together
//! with the original fn. `hygiene` keeps the generated code apart from
//! the user's.

mod args;
mod call;
mod debug;
mod hygiene;
mod schema;
mod serde;

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::spanned::Spanned;

use crate::ast::{Kind, Output, ToolFn};
use crate::attr::Effect;
use crate::valid::{Concurrency, Spec};
use args::default_fns;
use call::{hook_fn, run_body};
use debug::debug_impl;
use hygiene::{allow_lints, anchor, spanned};
use schema::schema_impl;
use serde::serde_impls;

pub(crate) use args::args_struct;
pub(crate) use hygiene::Krate;

pub(crate) fn expand(tool: &ToolFn, spec: &Spec, krate: &Krate) -> TokenStream {
    let at = anchor(tool);
    let item = &tool.item;
    let args = &spec.args;
    let fn_ident = &tool.ident;

    let args_struct = args_struct(tool, args, krate, true);
    let (serde_impls, deserialize_fn) = serde_impls(tool, args, krate);
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
    let tags = spec.tags.iter().map(|tag| spanned(tag, at));
    let timeout = match spec.timeout_ms {
        Some(ms) => {
            let ms = spanned(ms, at);
            quote_spanned!(at=> ::core::option::Option::Some(#krate::__private::Duration::from_millis(#ms)))
        }
        None => quote_spanned!(at=> ::core::option::Option::None),
    };
    let concurrency = match spec.concurrency {
        Concurrency::Unlimited => quote_spanned!(at=> #krate::__private::Concurrency::Unlimited),
        Concurrency::Exclusive => quote_spanned!(at=> #krate::__private::Concurrency::Exclusive),
        Concurrency::Limit(n) => {
            let n = spanned(n, at);
            quote_spanned!(at=> #krate::__private::concurrency_limit(#n))
        }
    };
    let max_result = match spec.max_result {
        Some(chars) => {
            let chars = spanned(chars as usize, at);
            quote_spanned!(at=> ::core::option::Option::Some(#chars))
        }
        None => quote_spanned!(at=> ::core::option::Option::None),
    };
    // Written only when declared: the trait's defaults say "not deferred,
    // no hint" at no cost to the other tools.
    let defer = spec
        .defer
        .then(|| quote_spanned!(at=> const DEFER: bool = true;));
    let search_hint = spec.search_hint.as_ref().map(|hint| {
        let hint = spanned(hint, at);
        quote_spanned!(at=> const SEARCH_HINT: ::core::option::Option<&'static str> = ::core::option::Option::Some(#hint);)
    });
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
            const TAGS: &'static [&'static str] = &[#(#tags),*];
            const TIMEOUT: ::core::option::Option<#krate::__private::Duration> = #timeout;
            const CONCURRENCY: #krate::__private::Concurrency = #concurrency;
            const MAX_RESULT: ::core::option::Option<usize> = #max_result;
            const LOCATION: #krate::__private::Location = #location;
            #defer
            #search_hint
            #[doc(hidden)]
            const INJECTS: bool = #injects;
            #[doc(hidden)]
            const PUBLIC: bool = #public;

            type Output = #output_ty;

            #deserialize_fn

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

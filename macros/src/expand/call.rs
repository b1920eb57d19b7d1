//! What a call runs: the `__authorize` and `__approve` hooks and the body
//! of `__run`.

use proc_macro2::{Delimiter, Group, Span, TokenStream, TokenTree};
use quote::{ToTokens, quote_spanned};
use syn::spanned::Spanned;
use syn::{GenericArgument, Ident, Path, PathArguments, Type};

use super::hygiene::{Krate, anchor};
use crate::ast::{Kind, Output, ToolFn};

/// `__authorize` or `__approve` (`name`) calling the hook at `path`: it
/// downcasts the context to the type the hook takes (inferred from its
/// signature) and calls it.
pub(super) fn hook_fn(
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
        ) -> #krate::__private::HookCall<impl ::core::marker::Send + '__a> {
            #body
        }
    }
}

/// The body of `__run`: take the inputs apart, resolve injected and context
/// parameters, call the fn, map its result.
pub(super) fn run_body(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
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
        // In a debug build, boxed, here and below: the pipeline's generic
        // instances then hold `BodyFuture`, not the body's own future, so
        // that an edit to a body recompiles that body, not every tool's
        // instances of the seam (see BENCHMARKS.md, "Compile cost of
        // tools"). Not in a release build, where the box would cost every
        // call an allocation.
        Output::Unit | Output::Plain(_) if inputs_only => {
            let krate = krate.at(fn_ident.span());
            quote_spanned! {fn_ident.span()=>
                {
                    #[cfg(debug_assertions)]
                    let __body: #krate::__private::BodyFuture<'__a, <Self as #krate::Tool>::Output> =
                        ::std::boxed::Box::pin(#call);
                    #[cfg(not(debug_assertions))]
                    let __body = #call;
                    #krate::__private::infallible(__body)
                }
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
            let in_place = quote_spanned! {fn_ident.span()=>
                async move {
                    #(#resolve)*
                    #result
                }
            };
            let no_context = tool.params.iter().all(|p| !matches!(p.kind, Kind::Context));
            let boxed = match output {
                Output::Unit | Output::Plain(_) if no_context => injected_body(tool, &call, krate),
                _ => {
                    let body_future = body_future(krate, fn_ident.span());
                    quote_spanned! {fn_ident.span()=>
                        {
                            let __body: #body_future = ::std::boxed::Box::pin(#in_place);
                            __body
                        }
                    }
                }
            };
            let krate = krate.at(fn_ident.span());
            quote_spanned! {fn_ident.span()=>
                {
                    #[allow(unused_imports)]
                    use #krate::__private::{InjectorFallback as _, InjectorResolve as _};
                    #[cfg(debug_assertions)]
                    let __body = #boxed;
                    #[cfg(not(debug_assertions))]
                    let __body = #in_place;
                    __body
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

/// In a debug build, the body of a tool whose parameters are inputs and
/// injected values, and whose output is not a `Result`: no `async` block,
/// which would be one more state machine per tool to check, lay out and
/// compile (and to box, see `BodyFuture`). `__private::injected` resolves
/// each value in turn, then hands it to a boxed closure that starts the
/// next resolution or, after the last, boxes the fn's own future: the
/// futures compiled are then one per injected type and output type, shared
/// by every tool, besides each fn's own. A release build runs the `async`
/// block in place instead, sparing each call the boxes.
fn injected_body(tool: &ToolFn, call: &TokenStream, krate: &Krate) -> TokenStream {
    let at = anchor(tool);
    let output = body_future(krate, at);
    let injected: Vec<_> = tool
        .params
        .iter()
        .filter(|p| matches!(p.kind, Kind::Inject))
        .collect();
    let mut body = {
        let krate = krate.at(at);
        quote_spanned!(at=> ::std::boxed::Box::pin(#krate::__private::infallible(#call)))
    };
    for (i, p) in injected.iter().enumerate().rev() {
        let ident = &p.ident;
        let ty = &p.ty;
        let krate = krate.at(ty.span());
        let level = quote_spanned! {ty.span()=>
            #krate::__private::injected(
                (&&#krate::__private::Injector::<#ty>(::core::marker::PhantomData))
                    .resolve(__scope, <Self as #krate::Tool>::KEY),
                ::std::boxed::Box::new(move |#ident: #ty| -> #output { #body }),
            )
        };
        body = if i == 0 {
            level
        } else {
            quote_spanned!(at=> ::std::boxed::Box::pin(#level))
        };
    }
    body
}

/// The type of a tool's boxed body in a debug build: its output, or the
/// error that resolving a parameter or the fn itself returned.
fn body_future(krate: &Krate, at: Span) -> TokenStream {
    let krate = krate.at(at);
    quote_spanned! {at=>
        #krate::__private::BodyFuture<
            '__a,
            ::core::result::Result<<Self as #krate::Tool>::Output, #krate::__private::CallError>,
        >
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

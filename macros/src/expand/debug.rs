//! The argument struct's `Debug`, which shows arguments as a caller sent them.

use proc_macro2::TokenStream;
use quote::quote_spanned;
use syn::Ident;

use super::hygiene::{Krate, allow_lints, anchor, spanned};
use crate::ast::ToolFn;

/// `Debug` for the argument struct: its fields as a caller sends them (see
/// `debug_args`), `#[secret]` ones masked, with no `Debug` bound on their types (a derive cannot
/// have one: the struct is not generic).
pub(super) fn debug_impl(tool: &ToolFn, args: &Ident, krate: &Krate) -> TokenStream {
    let at = anchor(tool);
    let allow = allow_lints(at);
    let struct_name = spanned(args.to_string(), at);
    let krate = krate.at(at);
    let secrets = tool
        .inputs()
        .filter(|(_, input)| input.secret)
        .map(|(p, _)| spanned(p.wire_name(), at));
    quote_spanned! {at=>
        #[automatically_derived]
        #allow
        impl ::core::fmt::Debug for #args {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #krate::__private::debug_args(self, #struct_name, &[#(#secrets),*], __f)
            }
        }
    }
}

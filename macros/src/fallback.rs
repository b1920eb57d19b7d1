//! What to emit when the declaration has mistakes: the errors, the original
//! fn (so editors and the rest of the crate keep working), and a plain
//! argument struct (so hooks that name it do not fail too).

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ToolFn;
use crate::expand::args_struct;

pub(crate) fn fallback(tool: &ToolFn, args: &syn::Ident, errors: darling::Error) -> TokenStream {
    let item = &tool.item;
    let stub = args_struct(tool, args, false);
    let errors = errors.write_errors();
    quote! {
        #errors
        #item
        #[allow(dead_code)]
        #stub
    }
}

//! What to emit when the declaration has mistakes: the errors, the original
//! fn (so editors and the rest of the crate keep working), and a plain
//! argument struct (so hooks that name it do not fail too).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::quote;

use crate::ast::ToolFn;
use crate::expand::{Krate, args_struct};

pub(crate) fn fallback(
    tool: &ToolFn,
    args: &syn::Ident,
    krate: &Krate,
    errors: TokenStream,
) -> TokenStream {
    let item = &tool.item;
    // A method sits in an `impl` block, where a struct cannot.
    let stub = (!tool.has_receiver).then(|| {
        let stub = args_struct(tool, args, krate, false);
        quote! {
            #[allow(dead_code)]
            #stub
        }
    });
    quote! {
        #errors
        #item
        #stub
    }
}

/// `#[tool]` on something that is not a fn: the item unchanged, and one
/// error on its head (`pub struct Name`), after any attributes.
pub(crate) fn not_a_fn(item: TokenStream) -> TokenStream {
    let mut tokens = item.clone().into_iter().peekable();
    let mut head = TokenStream::new();
    while let Some(token) = tokens.next() {
        match &token {
            TokenTree::Punct(p) if p.as_char() == '#' && head.is_empty() => {
                tokens.next(); // the attribute's `[...]`
            }
            TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
            TokenTree::Punct(p) if p.as_char() == ';' || p.as_char() == '=' => break,
            _ => head.extend([token]),
        }
    }
    let error = syn::Error::new_spanned(
        head,
        "`#[tool]` goes on an `async fn`; a tool is a function",
    )
    .to_compile_error();
    quote! {
        #error
        #item
    }
}

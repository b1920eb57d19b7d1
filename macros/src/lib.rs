//! The `#[tool]` attribute of [toolwright](https://docs.rs/toolwright).
//!
//! Use it through `toolwright::tool`; this crate only converts token streams.
//! The stages live one per file: `attr` parses the attribute, `ast` the fn,
//! `valid` checks both together, `expand` generates code, and `fallback`
//! says what to emit when there are mistakes.

mod ast;
mod attr;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool; see `toolwright::tool` for the grammar.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original = proc_macro2::TokenStream::from(item.clone());
    let item = match syn::parse::<syn::ItemFn>(item) {
        Ok(item) => item,
        Err(error) => {
            let mut error = error.to_compile_error();
            error.extend(original);
            error.extend(
                syn::Error::new(
                    proc_macro2::Span::call_site(),
                    "`#[tool]` goes on an `async fn`",
                )
                .to_compile_error(),
            );
            return error.into();
        }
    };
    let mut errors = darling::Error::accumulator();
    let attr = attr::ToolAttr::parse(attr.into(), &mut errors);
    let tool = ast::ToolFn::parse(item, &mut errors);
    let args = valid::args_ident(&attr, &tool);
    let spec = valid::check(attr, &tool, args.clone(), &mut errors);
    match (errors.finish(), spec) {
        (Ok(()), Some(spec)) => expand::expand(&tool, &spec).into(),
        (Err(errors), _) => fallback::fallback(&tool, &args, errors).into(),
        (Ok(()), None) => unreachable!("a failed check always records an error"),
    }
}

//! The `#[tool]` attribute of [toolwright](https://docs.rs/toolwright).
//!
//! Use it through `toolwright::tool`; this crate only converts token streams.
//! The stages live one per file: `attr` parses the attribute, `ast` the fn,
//! `valid` checks both together, `expand` generates code (one file per
//! thing generated), and `fallback` says what to emit when there are
//! mistakes. `errors` collects every mistake so that all of them are
//! reported in one build.

// Layers, lowest first: a module imports only modules on lines above its
// own (tests/tests/module_layers.rs checks it).
//   errors
//   ast attr
//   valid
//   expand
//   fallback
mod ast;
mod attr;
mod errors;
mod expand;
mod fallback;
mod valid;

use proc_macro::TokenStream;

/// Turns an `async fn` into a tool; see `toolwright::tool` for the grammar.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item = match syn::parse::<syn::ItemFn>(item.clone()) {
        Ok(item) => item,
        Err(_) => return fallback::not_a_fn(item.into()).into(),
    };
    let mut errors = errors::Errors::default();
    let attr = attr::ToolAttr::parse(attr.into(), &mut errors);
    let tool = ast::ToolFn::parse(item, &mut errors);
    let args = valid::args_ident(&attr, &tool);
    let krate = expand::Krate::new(attr.krate.as_ref());
    let spec = valid::check(attr, &tool, args.clone(), &mut errors);
    let tokens = match (errors.finish(), spec) {
        (None, Some(spec)) => expand::expand(&tool, &spec, &krate),
        (Some(errors), _) => fallback::fallback(&tool, &args, &krate, errors),
        (None, None) => unreachable!("a failed check always records an error"),
    };
    tokens.into()
}

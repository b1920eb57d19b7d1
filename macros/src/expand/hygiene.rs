//! What keeps the generated code apart from the user's: the span it says
//! it comes from, the path it reaches toolwright by, the lints it allows.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::Path;

use crate::ast::ToolFn;

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
pub(super) fn anchor(tool: &ToolFn) -> Span {
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
pub(super) fn allow_lints(at: Span) -> TokenStream {
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
pub(super) fn spanned(value: impl ToTokens, at: Span) -> TokenStream {
    value
        .into_token_stream()
        .into_iter()
        .map(|mut token| {
            token.set_span(at);
            token
        })
        .collect()
}

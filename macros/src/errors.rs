//! The mistakes found in one declaration, collected so that all of them are
//! reported in one build (serde_derive's `Ctxt`).
//!
//! Errors are `syn::Error`s built from the offending tokens, so a message
//! underlines the whole type or attribute (`&str`, `#[serde(...)]`), not only
//! its first token, on a stable compiler; a `darling::Error` holds one span,
//! which there is a node's first token, so darling's errors (attribute
//! values, each one token) are pushed in here once read.

use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

#[derive(Default)]
pub(crate) struct Errors {
    collected: Option<syn::Error>,
}

impl Errors {
    /// Records a message underlining every token of `tokens`.
    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records a message at one span.
    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.collected {
            Some(collected) => collected.combine(error),
            None => self.collected = Some(error),
        }
    }

    /// The `compile_error!`s of every recorded mistake, or `None` if there
    /// were none.
    pub(crate) fn finish(self) -> Option<TokenStream> {
        self.collected.map(|e| e.to_compile_error())
    }
}

/// The closest of `candidates` to a misspelled `word`, if one is close enough
/// to be what the user meant.
pub(crate) fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|candidate| (strsim::levenshtein(word, candidate), *candidate))
        .filter(|&(distance, candidate)| distance <= candidate.len().div_ceil(3))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

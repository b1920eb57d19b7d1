//! Integration tests of toolwright live in `tests/`.

/// The README, whose Rust examples run as this crate's doctests, so that
/// what the front page shows compiles and does what it says.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

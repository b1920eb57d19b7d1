//! The cases live in `tests/ui/`; `tests/ui.rs` runs them with trybuild.

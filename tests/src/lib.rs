//! Integration tests of toolwright live in `tests/`.

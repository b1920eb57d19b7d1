//! Every bad `#[tool]` declaration and the error it gets (`tests/ui/fail/`,
//! one mistake per file, grouped by category), and every supported shape
//! compiling and running (`tests/ui/pass/`).
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite`, then read each
//! one: an error must sit on the offending token and say the fix. Run one
//! case with `cargo test -p toolwright-ui-tests -- each_bad trybuild=<file name>`
//! (alone, `trybuild=` is also a test-name filter, which matches no test).

#[test]
fn each_bad_declaration_fails_with_its_error_and_each_supported_shape_runs() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/fail/**/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}

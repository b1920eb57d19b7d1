//! Arbitrary bytes as the arguments of every tool of a representative
//! catalog (`tests/tests/hostile/mod.rs`, shared with the property tests
//! of `tests/tests/hostile_input.rs`): parsed as JSON when they are JSON,
//! sent as a string otherwise. Every answer must keep that file's rules: a
//! result, `InvalidArguments` or a hook's refusal; a body only on
//! arguments the advertised schema accepts and the hooks let through; what
//! an approver sees is what runs; no panic.
//!
//! From the repository root (`fuzz/seeds/invoke` holds a call each tool
//! takes, `fuzz/invoke.dict` the catalog's field names and words; without
//! them, ten minutes do not reach past the first checks of most tools):
//!
//! ```sh
//! cargo fuzz run invoke fuzz/corpus/invoke fuzz/seeds/invoke -- -dict=fuzz/invoke.dict
//! ```
#![no_main]

#[path = "../../tests/tests/hostile/mod.rs"]
mod hostile;

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

static FIXTURE: LazyLock<hostile::Fixture> = LazyLock::new(hostile::Fixture::new);

fuzz_target!(|data: &[u8]| {
    let arguments = serde_json::from_slice::<Value>(data)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(data).into_owned()));
    if let Err(broken) = FIXTURE.send_everywhere(&arguments) {
        panic!("{broken}");
    }
});

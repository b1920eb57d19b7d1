//! Generates the tools `benches/scale.rs` measures: `SCALE_TOOLS` of them
//! (default 100, so that a workspace build stays quick), in modules of
//! 10, 90, 900 and 9,000 tools, so that the catalog of the first module
//! has 10 tools, of the first two 100, of the first three 1,000 and of
//! all four 10,000.
//!
//! `SCALE_TOOLS=10000 cargo bench -p toolwright-scale-bench`

use std::fmt::Write as _;
use std::path::PathBuf;
use std::{env, fs};

/// Module sizes; their running totals are the catalog sizes measured.
const MODULES: [usize; 4] = [10, 90, 900, 9_000];

/// Tools per submodule.
const PART: usize = 200;

fn main() {
    println!("cargo::rerun-if-env-changed=SCALE_TOOLS");
    println!("cargo::rerun-if-changed=build.rs");
    let wanted = match env::var("SCALE_TOOLS") {
        Ok(n) => n.trim().parse::<usize>().unwrap_or_else(|_| {
            panic!("SCALE_TOOLS must be a number of tools (10, 100, 1000 or 10000), not {n:?}")
        }),
        Err(_) => 100,
    };

    let mut out = String::new();
    let mut made = 0;
    let mut sizes = Vec::new();
    for (m, size) in MODULES.into_iter().enumerate() {
        if made + size > wanted {
            break;
        }
        writeln!(out, "pub mod m{m} {{").unwrap();
        // Parts of at most PART tools: rustc places a module's items in one
        // codegen unit, and one unit of thousands of tools needs more
        // memory than these machines have.
        for (p, start) in (made..made + size).step_by(PART).enumerate() {
            writeln!(out, "pub mod p{p} {{").unwrap();
            writeln!(out, "    use super::super::{{Filter, Order}};").unwrap();
            for i in start..(start + PART).min(made + size) {
                tool(&mut out, i);
            }
            writeln!(out, "}}").unwrap();
        }
        writeln!(out, "}}").unwrap();
        made += size;
        sizes.push(made);
    }
    writeln!(
        out,
        "/// The catalog sizes generated: module prefixes `m0` to `m<i>`."
    )
    .unwrap();
    writeln!(out, "pub const SIZES: &[usize] = &{sizes:?};").unwrap();

    let path = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("tools.rs");
    fs::write(path, out).expect("OUT_DIR is writable");
}

/// One tool with a realistic mix of argument shapes: a required integer,
/// an optional string, an enum, a constrained optional integer and, for
/// every tenth tool, a nested struct.
fn tool(out: &mut String, i: usize) {
    let nested = if i.is_multiple_of(10) {
        "        /// Narrow the result.\n        filter: Option<Filter>,\n"
    } else {
        ""
    };
    let filter_use = if i.is_multiple_of(10) {
        "let _ = filter; "
    } else {
        ""
    };
    write!(
        out,
        r#"
    /// Look up records of kind {i} by id, optionally matching a query.
    #[toolwright::tool(key = "scale.kind{i}.find", effect = read, authorize = public)]
    pub async fn find_kind_{i}(
        /// The first record id.
        id: u64,
        /// Free text to match.
        query: Option<String>,
        /// The order of the results.
        order: Order,
        /// How many records to return.
        #[schemars(range(min = 1, max = 100))]
        limit: Option<u32>,
{nested}    ) -> Vec<u64> {{
        {filter_use}let _ = (query, order);
        (id..id + u64::from(limit.unwrap_or(1))).collect()
    }}
"#
    )
    .unwrap();
}

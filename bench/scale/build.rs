//! Generates the tools `benches/scale.rs` measures: `SCALE_TOOLS` of them
//! (default 100, so that a workspace build stays quick), in modules of
//! 10, 90, 900 and 9,000 tools, so that the catalog of the first module
//! has 10 tools, of the first two 100, of the first three 1,000 and of
//! all four 10,000.
//!
//! rustc needs about 2 MB of memory per tool of this shape, and a crate of
//! 10,000 was killed at 24 GB; so half of the largest module goes into this
//! package's library (`lib_tools.rs`) and the rest into the benchmark
//! (`tools.rs`), two crates of about 5,000 tools each. Within a crate the
//! tools sit in parts of 200, so that they spread over codegen units.
//!
//! `SCALE_TOOLS=10000 cargo bench -p toolwright-scale-bench`
//!
//! `SCALE_SHAPE=plain` leaves out the one constraint each tool has (the
//! range of `limit`), so that deserializing checks every argument and the
//! executor compiles no validator until a call's arguments fail to
//! deserialize.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::{env, fs};

/// Module sizes; their running totals are the catalog sizes measured.
const MODULES: [usize; 4] = [10, 90, 900, 9_000];

/// Tools per submodule.
const PART: usize = 200;

/// A module at least this large is split between the library and the bench.
const SPLIT_FROM: usize = 2_000;

fn main() {
    println!("cargo::rerun-if-env-changed=SCALE_TOOLS");
    println!("cargo::rerun-if-env-changed=SCALE_SHAPE");
    println!("cargo::rerun-if-changed=build.rs");
    let wanted = match env::var("SCALE_TOOLS") {
        Ok(n) => n.trim().parse::<usize>().unwrap_or_else(|_| {
            panic!("SCALE_TOOLS must be a number of tools (10, 100, 1000 or 10000), not {n:?}")
        }),
        Err(_) => 100,
    };

    let mut bench = String::new();
    let mut lib = String::new();
    let mut made = 0;
    let mut sizes = Vec::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut prefixes_by_size = Vec::new();
    for (m, size) in MODULES.into_iter().enumerate() {
        if made + size > wanted {
            break;
        }
        let end = made + size;
        let in_lib = if size >= SPLIT_FROM { size / 2 } else { 0 };
        if in_lib > 0 {
            module(&mut lib, m, made..made + in_lib);
            prefixes.push(format!("toolwright_scale_bench::generated::m{m}"));
        }
        module(&mut bench, m, made + in_lib..end);
        prefixes.push(format!("scale::tools::m{m}"));
        made = end;
        sizes.push(made);
        prefixes_by_size.push(prefixes.clone());
    }
    writeln!(bench, "/// The catalog sizes generated.").unwrap();
    writeln!(bench, "pub const SIZES: &[usize] = &{sizes:?};").unwrap();
    writeln!(
        bench,
        "/// For each size, the module prefixes that select its tools."
    )
    .unwrap();
    let prefixes_by_size: Vec<String> = prefixes_by_size
        .iter()
        .map(|prefixes| format!("&{prefixes:?}"))
        .collect();
    writeln!(
        bench,
        "pub const PREFIXES: &[&[&str]] = &[{}];",
        prefixes_by_size.join(", ")
    )
    .unwrap();

    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    fs::write(out.join("tools.rs"), bench).expect("OUT_DIR is writable");
    fs::write(out.join("lib_tools.rs"), lib).expect("OUT_DIR is writable");
}

/// Module `m{m}` with the tools numbered `range`, in parts of [`PART`].
fn module(out: &mut String, m: usize, range: std::ops::Range<usize>) {
    writeln!(out, "pub mod m{m} {{").unwrap();
    for (p, start) in range.clone().step_by(PART).enumerate() {
        writeln!(out, "pub mod p{p} {{").unwrap();
        writeln!(out, "    use super::super::{{Filter, Order}};").unwrap();
        for i in start..(start + PART).min(range.end) {
            tool(out, i);
        }
        writeln!(out, "}}").unwrap();
    }
    writeln!(out, "}}").unwrap();
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
    let range = match env::var("SCALE_SHAPE").as_deref() {
        Ok("plain") => "",
        _ => "#[schemars(range(min = 1, max = 100))]\n        ",
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
        {range}limit: Option<u32>,
{nested}    ) -> Vec<u64> {{
        {filter_use}let _ = (query, order);
        (id..id + u64::from(limit.unwrap_or(1))).collect()
    }}
"#
    )
    .unwrap();
}

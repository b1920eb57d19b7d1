//! `cargo toolwright new module` as a user runs it: in a crate's directory,
//! through the built binary. Each test works in a folder of its own under
//! `CARGO_TARGET_TMPDIR/new_module/`, emptied first and kept afterwards to
//! look at.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// What one run of the binary gave.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs `cargo toolwright new module <args>` in `dir`, as cargo runs the
/// subcommand: `cargo-toolwright toolwright new module <args>`.
fn new_module(dir: &Path, args: &[&str]) -> Run {
    let output = Command::new(env!("CARGO_BIN_EXE_cargo-toolwright"))
        .args(["toolwright", "new", "module"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs");
    Run {
        success: output.status.success(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// `name`'s folder under the tests' temporary directory, empty.
fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("new_module")
        .join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap();
    }
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A library crate named `name`, with `dependencies` (TOML lines), in its
/// own workspace (it sits inside this one's target directory).
fn library_crate(name: &str, dependencies: &str) -> PathBuf {
    let dir = fresh_dir(name);
    let manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n{dependencies}\n[workspace]\n"
    );
    fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    fs::create_dir(dir.join("src")).unwrap();
    fs::write(
        dir.join("src/lib.rs"),
        "//! Modules that `cargo toolwright new module` wrote.\n#![deny(warnings, missing_docs)]\n",
    )
    .unwrap();
    dir
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                files.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Does what the printed lines say: "add `pub mod x;` to FILE", FILE
/// being created when it is "(a new file)".
fn declare(dir: &Path, stdout: &str) {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|line| line.starts_with("add `"))
        .collect();
    assert!(!lines.is_empty(), "no line to add in:\n{stdout}");
    for line in lines {
        let (declaration, file) = line["add `".len()..].split_once("` to ").unwrap();
        let (file, new) = match file.strip_suffix(" (a new file)") {
            Some(file) => (file, true),
            None => (file, false),
        };
        let path = dir.join(file);
        assert_eq!(path.exists(), !new, "{line}");
        let mut text = fs::read_to_string(&path)
            .unwrap_or_else(|_| "//! A module declared for the test.\n".to_owned());
        text.push_str(declaration);
        text.push('\n');
        fs::write(path, text).unwrap();
    }
}

#[test]
fn every_kind_compiles_and_its_test_sees_the_hooks_refuse() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let runtime = fs::canonicalize(workspace.join("runtime")).unwrap();
    let dependencies = format!(
        "[dependencies]\n\
         toolwright = {{ path = {:?}, features = [\"mcp\"] }}\n\
         serde = {{ version = \"1\", features = [\"derive\"] }}\n\
         schemars = \"1\"\n\n\
         [dev-dependencies]\n\
         tokio = {{ version = \"1\", features = [\"macros\", \"rt\"] }}\n",
        runtime.display().to_string()
    );
    let dir = library_crate("generated", &dependencies);
    // The versions the workspace is tested with, and nothing to resolve.
    fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    // A parent that exists, in the `catalog.rs` form: one line to add.
    fs::write(dir.join("src/catalog.rs"), "//! The catalog.\n").unwrap();
    fs::write(dir.join("src/lib.rs"), {
        let mut lib = fs::read_to_string(dir.join("src/lib.rs")).unwrap();
        lib.push_str("pub mod catalog;\n");
        lib
    })
    .unwrap();

    let modules: [&[&str]; 5] = [
        // No kind: `--read`.
        &["catalog::products"],
        &["orders", "--write"],
        // Parents that do not exist yet: a line for each.
        &["inventory::stock_items", "--crud"],
        &["billing", "--plain"],
        // A long path, whose names make lines wide enough to break.
        &["support::customer_account_histories", "--crud", "--mcp"],
    ];
    for args in modules {
        let run = new_module(&dir, args);
        assert!(run.success, "{args:?}: {}", run.stderr);
        declare(&dir, &run.stdout);
    }
    let catalog = fs::read_to_string(dir.join("src/catalog.rs")).unwrap();
    assert!(catalog.ends_with("pub mod products;\n"), "{catalog}");

    // As rustfmt would write it (rustfmt follows each folder's `mod` lines).
    for module in [
        "catalog/products",
        "orders",
        "inventory/stock_items",
        "billing",
        "support/customer_account_histories",
    ] {
        let status = Command::new("rustfmt")
            .args(["--edition", "2024", "--check"])
            .arg(dir.join("src").join(module).join("mod.rs"))
            .status()
            .expect("rustfmt is installed (rustup component add rustfmt)");
        assert!(status.success(), "src/{module} is not as rustfmt writes it");
    }

    // One target directory for every scratch crate of the CLI's tests
    // (`contract.rs` too, with the same features), so that toolwright
    // builds once.
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scratch-target");
    let started = Instant::now();
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["test", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "cargo test failed:\n{stdout}\n{stderr}"
    );
    eprintln!(
        "cargo test of the generated crate: {:.1?}",
        started.elapsed()
    );
    // read 2, write 3, crud 3, plain 2, crud with MCP 4.
    assert!(stdout.contains("test result: ok. 14 passed"), "{stdout}");
}

#[test]
fn the_module_and_its_parent_line_are_printed() {
    let dir = library_crate("printed", "");
    fs::create_dir(dir.join("src/catalog")).unwrap();
    fs::write(dir.join("src/catalog/mod.rs"), "//! The catalog.\n").unwrap();
    let run = new_module(&dir, &["catalog::products"]);
    assert!(run.success, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..6],
        [
            "wrote src/catalog/products/mod.rs",
            "wrote src/catalog/products/tools.rs",
            "wrote src/catalog/products/hooks.rs",
            "wrote src/catalog/products/tests.rs",
            "",
            "add `pub mod products;` to src/catalog/mod.rs",
        ]
    );
    // The parent is not edited: the user adds the line.
    let parent = fs::read_to_string(dir.join("src/catalog/mod.rs")).unwrap();
    assert_eq!(parent, "//! The catalog.\n");
    assert!(!run.stdout.contains("mcp"), "{}", run.stdout);
}

#[test]
fn mcp_says_the_crate_needs_the_mcp_feature() {
    let dir = library_crate("mcp_feature", "");
    let run = new_module(&dir, &["products", "--mcp"]);
    assert!(run.success, "{}", run.stderr);
    assert!(dir.join("src/products/mcp.rs").is_file());
    assert!(
        run.stdout
            .contains("--mcp: the crate must depend on toolwright with its `mcp` feature"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("features = [\"mcp\"]"),
        "{}",
        run.stdout
    );
}

#[test]
fn keys_follow_the_module_path_and_names_are_valid() {
    let dir = library_crate("names", "");
    let run = new_module(&dir, &["support::customer_account_histories", "--crud"]);
    assert!(run.success, "{}", run.stderr);
    let tools =
        fs::read_to_string(dir.join("src/support/customer_account_histories/tools.rs")).unwrap();
    let quoted = |key: &str| -> Vec<String> {
        let marker = format!("{key} = \"");
        tools
            .match_indices(&marker)
            .map(|(at, _)| {
                let rest = &tools[at + marker.len()..];
                rest[..rest.find('"').unwrap()].to_owned()
            })
            .collect()
    };
    let keys = quoted("key");
    let operations = ["list", "get", "create", "update", "delete"];
    let expected: Vec<String> = operations
        .iter()
        .map(|op| format!("support.customer_account_histories.{op}"))
        .collect();
    assert_eq!(keys, expected);
    for name in quoted("name") {
        let mut chars = name.chars();
        let first = chars.next().unwrap();
        assert!(first.is_ascii_lowercase() || first == '_', "{name}");
        assert!(
            chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name}"
        );
        assert!(name.len() <= 64, "{name} is {} characters", name.len());
    }
}

#[test]
fn existing_files_are_not_overwritten_without_force() {
    let dir = library_crate("existing", "");
    assert!(new_module(&dir, &["products", "--crud"]).success);
    let mod_rs = dir.join("src/products/mod.rs");
    fs::write(&mod_rs, "// mine\n").unwrap();
    fs::remove_file(dir.join("src/products/tools.rs")).unwrap();
    let before = snapshot(&dir);

    let refused = new_module(&dir, &["products", "--crud"]);
    assert!(!refused.success);
    assert!(
        refused.stderr.contains("src/products/ already exists"),
        "{}",
        refused.stderr
    );
    for file in ["mod.rs", "hooks.rs", "tests.rs"] {
        let path = format!("src/products/{file}");
        assert!(
            refused.stderr.contains(&path),
            "{path} not named: {}",
            refused.stderr
        );
    }
    assert!(!refused.stderr.contains("tools.rs"), "{}", refused.stderr);
    assert!(refused.stderr.contains("--force"), "{}", refused.stderr);
    assert_eq!(snapshot(&dir), before, "a refused run wrote something");

    let forced = new_module(&dir, &["products", "--crud", "--force"]);
    assert!(forced.success, "{}", forced.stderr);
    assert!(
        forced.stdout.contains("overwrote src/products/mod.rs"),
        "{}",
        forced.stdout
    );
    assert!(
        forced.stdout.contains("wrote src/products/tools.rs"),
        "{}",
        forced.stdout
    );
    let fresh = library_crate("existing_fresh", "");
    assert!(new_module(&fresh, &["products", "--crud"]).success);
    for file in ["mod.rs", "tools.rs", "hooks.rs", "tests.rs"] {
        let path = format!("src/products/{file}");
        assert_eq!(
            fs::read(dir.join(&path)).unwrap(),
            fs::read(fresh.join(&path)).unwrap(),
            "{path} was not overwritten"
        );
    }
}

#[test]
fn a_module_that_exists_as_a_file_is_refused_even_with_force() {
    let dir = library_crate("module_file", "");
    fs::write(dir.join("src/products.rs"), "//! Products.\n").unwrap();
    let before = snapshot(&dir);
    let refused = new_module(&dir, &["products", "--force"]);
    assert!(!refused.success);
    assert!(
        refused
            .stderr
            .contains("module `products` already exists as src/products.rs"),
        "{}",
        refused.stderr
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn invalid_paths_are_refused_and_nothing_is_written() {
    let dir = library_crate("invalid", "");
    let before = snapshot(&dir);
    let too_long = format!("tools::{}", "x".repeat(60));
    let cases: [(&str, &str); 9] = [
        ("", "is not a module path"),
        ("::", "a segment is empty"),
        ("catalog::", "a segment is empty"),
        ("Catalog::products", "`Catalog` is not a snake_case name"),
        ("catalog::type", "`type` is a Rust keyword"),
        ("self", "`self` is a Rust keyword"),
        (
            "catalog-products",
            "`catalog-products` is not a snake_case name",
        ),
        ("2fa", "`2fa` is not a snake_case name"),
        (&too_long, "longer than 64 characters"),
    ];
    for (path, message) in cases {
        let run = new_module(&dir, &[path]);
        assert!(!run.success, "`{path}` was accepted");
        assert!(run.stderr.contains(message), "`{path}`: {}", run.stderr);
    }
    // Two kinds at once are a usage error.
    let run = new_module(&dir, &["products", "--read", "--crud"]);
    assert!(!run.success, "two kinds were accepted");
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn a_directory_that_is_not_a_cargo_project_is_refused() {
    let empty = fresh_dir("not_a_project");
    let run = new_module(&empty, &["products"]);
    assert!(!run.success);
    assert!(
        run.stderr
            .contains("is not a Cargo project (no Cargo.toml)"),
        "{}",
        run.stderr
    );
    assert!(snapshot(&empty).is_empty());

    let workspace = fresh_dir("virtual_workspace");
    fs::write(workspace.join("Cargo.toml"), "[workspace]\nmembers = []\n").unwrap();
    let run = new_module(&workspace, &["products"]);
    assert!(!run.success);
    assert!(run.stderr.contains("has no [package]"), "{}", run.stderr);
    assert_eq!(snapshot(&workspace).len(), 1);

    let no_src = fresh_dir("no_src");
    fs::write(
        no_src.join("Cargo.toml"),
        "[package]\nname = \"no_src\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let run = new_module(&no_src, &["products"]);
    assert!(!run.success);
    assert!(run.stderr.contains("has no src/ folder"), "{}", run.stderr);
    assert_eq!(snapshot(&no_src).len(), 1);
}

#[test]
fn generating_twice_gives_identical_bytes() {
    for args in [
        &["catalog::products", "--read"][..],
        &["orders", "--write"],
        &["inventory::items", "--crud", "--mcp"],
        &["billing", "--plain"],
    ] {
        let mut outputs = Vec::new();
        for attempt in ["first", "second"] {
            let dir = library_crate(&format!("twice_{attempt}"), "");
            let run = new_module(&dir, args);
            assert!(run.success, "{}", run.stderr);
            let files: BTreeMap<PathBuf, Vec<u8>> = snapshot(&dir.join("src"))
                .into_iter()
                .map(|(path, bytes)| (path.strip_prefix(&dir).unwrap().to_path_buf(), bytes))
                .collect();
            outputs.push((run.stdout, files));
        }
        assert!(
            outputs[0] == outputs[1],
            "{args:?} differs between two runs"
        );
    }
}

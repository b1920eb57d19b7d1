//! `cargo toolwright inspect`, `lock` and `check` on a crate of their own:
//! a binary that calls `toolwright::inspect::exit_if_asked`, built with
//! this checkout's toolwright, its tool changed between a lock and a check.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch crate, removed when the test ends.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Scratch {
    /// A binary crate whose only tool is `tool` (Rust source).
    fn new(name: &str, tool: &str) -> Scratch {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let manifest = format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\ntoolwright = {{ path = {:?}, features = [\"mcp\"] }}\n\n[workspace]\n",
            workspace.join("runtime")
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        // The workspace's pins: the versions this checkout builds with,
        // nothing newer fetched.
        std::fs::copy(workspace.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        let scratch = Scratch(dir);
        scratch.set_tool(tool);
        scratch
    }

    fn set_tool(&self, tool: &str) {
        let main = format!(
            "{tool}\n\nfn main() {{\n    let catalog = toolwright::Catalog::discover().unwrap();\n    \
             toolwright::inspect::exit_if_asked(&catalog);\n    println!(\"serving\");\n}}\n"
        );
        std::fs::write(self.0.join("src/main.rs"), main).unwrap();
    }

    /// `cargo toolwright <args>` in the crate; its output.
    fn toolwright(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_cargo-toolwright"))
            .arg("toolwright")
            .args(args)
            .current_dir(&self.0)
            // One build of toolwright for every scratch crate of the CLI's
            // tests (`new_module.rs` too, with the same features).
            .env(
                "CARGO_TARGET_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("scratch-target"),
            )
            .output()
            .unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const QUOTE: &str = r#"
/// The price of a product, in cents.
#[toolwright::tool(key = "shop.quote", effect = read, authorize = public)]
async fn quote(sku: String) -> u64 {
    sku.len() as u64
}
"#;

#[test]
fn check_classifies_a_changed_tool_against_the_lock() {
    let scratch = Scratch::new("contract-demo", QUOTE);

    // No lock yet: says what to run.
    let missing = scratch.toolwright(&["check"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("run `cargo toolwright lock`"));

    let table = scratch.toolwright(&["inspect"]);
    assert!(table.status.success(), "{}", text(&table.stderr));
    assert_eq!(
        text(&table.stdout),
        "NAME   KEY         EFFECT  TAGS\nquote  shop.quote  read\n1 tools\n"
    );
    let openai = scratch.toolwright(&["inspect", "--format", "openai-strict"]);
    assert!(text(&openai.stdout).contains("\"name\": \"quote\""));

    let locked = scratch.toolwright(&["lock"]);
    assert!(locked.status.success(), "{}", text(&locked.stderr));
    let lock = std::fs::read_to_string(scratch.0.join("tools.lock.json")).unwrap();
    assert!(lock.contains("\"key\": \"shop.quote\""), "{lock}");
    let same = scratch.toolwright(&["check"]);
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stdout));
    assert!(text(&same.stdout).contains("0 difference(s)"));

    // Only the words: listed, not breaking.
    scratch.set_tool(&QUOTE.replace("in cents", "in euro cents"));
    let described = scratch.toolwright(&["check"]);
    assert_eq!(
        described.status.code(),
        Some(0),
        "{}",
        text(&described.stdout)
    );
    assert!(text(&described.stdout).contains("described  shop.quote: its description changed"));

    // A required argument: breaking, with the reason.
    scratch.set_tool(&QUOTE.replace("sku: String", "sku: String, quantity: u32"));
    let breaking = scratch.toolwright(&["check"]);
    assert_eq!(
        breaking.status.code(),
        Some(1),
        "{}",
        text(&breaking.stdout)
    );
    assert!(
        text(&breaking.stdout).contains(
            "breaking   shop.quote: a required argument `quantity` was added: calls without it are refused"
        ),
        "{}",
        text(&breaking.stdout)
    );

    // A lock that cannot be read: says what to run.
    std::fs::write(scratch.0.join("tools.lock.json"), "{ not json").unwrap();
    let corrupt = scratch.toolwright(&["check"]);
    assert_eq!(corrupt.status.code(), Some(2));
    assert!(text(&corrupt.stderr).contains("run `cargo toolwright lock` to write it anew"));
}

//! The modules of `runtime/src` and `macros/src` import one way.
//!
//! Each crate's `lib.rs` lists its modules in layers, lowest first, in a
//! comment block that starts with `Layers, lowest first`. A module may
//! import (`crate::name`, outside comments) only modules on lines above its
//! own: never one on its own line, never one below. So there is no circle,
//! and the list in `lib.rs` is the order the code keeps. Every module the
//! crate declares must be on the list, once.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is inside the workspace")
        .to_owned()
}

#[test]
fn runtime_modules_import_only_lower_layers() {
    assert_one_way(&workspace().join("runtime/src"));
}

#[test]
fn macro_modules_import_only_lower_layers() {
    assert_one_way(&workspace().join("macros/src"));
}

#[test]
fn an_import_from_above_is_found() {
    let modules = BTreeMap::from([
        (
            "a".to_owned(),
            "use crate::b::Thing; // crate::c".to_owned(),
        ),
        ("b".to_owned(), "/// crate::a\nfn f() {}".to_owned()),
        ("c".to_owned(), "use crate::a;".to_owned()),
    ]);
    let layers = vec![vec!["b".to_owned()], vec!["a".to_owned(), "c".to_owned()]];
    assert_eq!(
        upward_imports(&layers, &modules),
        ["`c` imports `a`, which is not on a line above it"]
    );
    let backwards = vec![vec!["a".to_owned()], vec!["b".to_owned(), "c".to_owned()]];
    assert_eq!(
        upward_imports(&backwards, &modules),
        ["`a` imports `b`, which is not on a line above it"]
    );
}

/// Fails, naming every offence, unless the crate at `src` keeps its layers.
fn assert_one_way(src: &Path) {
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs reads");
    let layers = layers(&lib);
    assert!(
        !layers.is_empty(),
        "{}: no `Layers, lowest first` list",
        src.display()
    );
    let modules = modules(src, &lib);
    let mut problems = Vec::new();
    let listed: Vec<&String> = layers.iter().flatten().collect();
    for name in modules.keys() {
        match listed.iter().filter(|listed| **listed == name).count() {
            1 => {}
            0 => problems.push(format!("`{name}` is on no layer of lib.rs")),
            _ => problems.push(format!("`{name}` is on more than one layer of lib.rs")),
        }
    }
    for name in &listed {
        if !modules.contains_key(*name) {
            problems.push(format!(
                "the layer list names `{name}`, which lib.rs does not declare"
            ));
        }
    }
    problems.extend(upward_imports(&layers, &modules));
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        src.display(),
        problems.join("\n")
    );
}

/// The layers listed in `lib`: the comment lines after the one that says
/// `Layers, lowest first`, each a line of module names.
fn layers(lib: &str) -> Vec<Vec<String>> {
    let mut lines = lib
        .lines()
        .skip_while(|line| !line.contains("Layers, lowest first"));
    lines.next();
    lines
        .skip_while(|line| !line.trim_start().starts_with("//   "))
        .take_while(|line| line.trim_start().starts_with("//   "))
        .map(|line| {
            line.trim_start()
                .trim_start_matches('/')
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        })
        .collect()
}

/// Every module `lib` declares, with the text of its files.
fn modules(src: &Path, lib: &str) -> BTreeMap<String, String> {
    let mut modules = BTreeMap::new();
    let mut path_attr = None;
    for line in lib.lines().map(str::trim) {
        if let Some(path) = line.strip_prefix("#[path = \"") {
            path_attr = path.split('"').next().map(str::to_owned);
            continue;
        }
        let Some(name) = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'))
        else {
            if !line.starts_with("#[") {
                path_attr = None;
            }
            continue;
        };
        let (file, folder) = match path_attr.take() {
            Some(path) if path.ends_with("/mod.rs") => {
                let file = src.join(&path);
                let folder = file.parent().expect("a mod.rs is in a folder").to_owned();
                (file, folder)
            }
            Some(path) => (src.join(&path), src.join(path.trim_end_matches(".rs"))),
            None => (src.join(format!("{name}.rs")), src.join(name)),
        };
        let mut text = String::new();
        for file in files_of(&file, &folder) {
            text.push_str(&fs::read_to_string(&file).expect("a module's file reads"));
            text.push('\n');
        }
        modules.insert(name.to_owned(), text);
    }
    modules
}

/// The files of a module: its own file (`name.rs`, or the one its `#[path]`
/// names), and everything under its folder.
fn files_of(file: &Path, folder: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    if file.is_file() {
        files.push(file.to_owned());
    }
    if folder.is_dir() {
        walk(folder, &mut files);
    }
    files.sort();
    files.dedup();
    files
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a module's folder reads") {
        let path = entry.expect("a folder entry reads").path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// Every import of a module on its own line or a line below.
fn upward_imports(layers: &[Vec<String>], modules: &BTreeMap<String, String>) -> Vec<String> {
    let layer_of = |name: &str| {
        layers
            .iter()
            .position(|layer| layer.iter().any(|m| m == name))
    };
    let mut problems = Vec::new();
    for (name, text) in modules {
        let Some(own) = layer_of(name) else { continue };
        let mut imported: Vec<&str> = imports(text)
            .into_iter()
            .filter(|other| other != name && modules.contains_key(*other))
            .collect();
        imported.sort_unstable();
        imported.dedup();
        for other in imported {
            if layer_of(other).is_some_and(|layer| layer >= own) {
                problems.push(format!(
                    "`{name}` imports `{other}`, which is not on a line above it"
                ));
            }
        }
    }
    problems
}

/// The modules named as `crate::name` in `text`, comments left out.
fn imports(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            // `$crate::`, `other_crate::`: not this crate.
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let end = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            names.push(&rest[..end]);
        }
    }
    names
}

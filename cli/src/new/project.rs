//! The crate to write into: its `src/` folder, where a module goes, and
//! what is already there.

use std::path::{Path, PathBuf};

use super::module_path::ModulePath;

/// A Cargo package's directory, with its `src/`.
#[derive(Debug)]
pub(crate) struct Project {
    root: PathBuf,
}

impl Project {
    /// The package whose `Cargo.toml` is in `dir`, or why there is none.
    pub(crate) fn at(dir: &Path) -> Result<Project, String> {
        let manifest = dir.join("Cargo.toml");
        let text = match std::fs::read_to_string(&manifest) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Err(format!(
                    "{} is not a Cargo project (no Cargo.toml): run `cargo toolwright new module` in the directory of the crate to write into",
                    dir.display()
                ));
            }
            Err(error) => return Err(format!("cannot read {}: {error}", manifest.display())),
        };
        // A package's manifest has a `[package]` table; a virtual
        // workspace's has none, and no `src/` of its own.
        if !text.lines().any(|line| line.trim() == "[package]") {
            return Err(format!(
                "{} has no [package]: run `cargo toolwright new module` in the directory of the crate to write into (a workspace member's, not the workspace's)",
                manifest.display()
            ));
        }
        if !dir.join("src").is_dir() {
            return Err(format!(
                "{} has no src/ folder to write the module into",
                dir.display()
            ));
        }
        Ok(Project {
            root: dir.to_path_buf(),
        })
    }

    /// The absolute path of `relative`, a `/`-separated path in the package.
    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        relative
            .split('/')
            .fold(self.root.clone(), |path, part| path.join(part))
    }

    /// Whether `relative` exists as a file.
    pub(crate) fn is_file(&self, relative: &str) -> bool {
        self.path(relative).is_file()
    }

    /// Whether `relative` exists at all.
    pub(crate) fn exists(&self, relative: &str) -> bool {
        self.path(relative).exists()
    }

    /// The lines to add so that the crate declares `module`, top-down: the
    /// first declares the outermost module not declared yet (as far as
    /// files tell), the last `module` itself in its parent.
    pub(crate) fn declarations(&self, module: &ModulePath) -> Vec<String> {
        let segments = module.segments();
        let mut lines = Vec::new();
        for depth in (0..segments.len()).rev() {
            let name = &segments[depth];
            let (parent, exists) = self.module_file(&segments[..depth]);
            let line = if exists {
                format!("add `pub mod {name};` to {parent}")
            } else {
                format!("add `pub mod {name};` to {parent} (a new file)")
            };
            lines.push(line);
            if exists {
                break;
            }
        }
        lines.reverse();
        lines
    }

    /// The file of the module at `segments` (the crate root for none), and
    /// whether it exists: `src/lib.rs` (or `src/main.rs`), `src/a.rs` or
    /// `src/a/mod.rs`. A module with no file yet gets `mod.rs` in its folder.
    fn module_file(&self, segments: &[String]) -> (String, bool) {
        let candidates = if segments.is_empty() {
            vec!["src/lib.rs".to_owned(), "src/main.rs".to_owned()]
        } else {
            let folder = format!("src/{}", segments.join("/"));
            vec![format!("{folder}.rs"), format!("{folder}/mod.rs")]
        };
        match candidates.iter().find(|file| self.is_file(file)) {
            Some(file) => (file.clone(), true),
            None if segments.is_empty() => ("src/lib.rs".to_owned(), false),
            None => (candidates[1].clone(), false),
        }
    }
}

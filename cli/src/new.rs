//! `cargo toolwright new module`: a module of tools calling a service, with
//! hooks that refuse until written and a test that says so.
//!
//! `cargo toolwright new module catalog::products` writes, in the crate of
//! the current directory, `src/catalog/products/`:
//!
//! - `mod.rs`: the service trait the tools call, an in-memory
//!   implementation to start from, and `MODULE`, the module's path for
//!   `Catalog::discover_in`;
//! - `tools.rs`: the `#[tool]` functions, keyed `catalog.products.get` …
//!   and named `catalog_products_get` …, their doc comments their
//!   descriptions;
//! - `hooks.rs`: the `authorize` (and, for tools that change something,
//!   `approve`) hook the tools name, failing every call with
//!   "not configured yet: implement authorize in …/hooks.rs" until written;
//! - `tests.rs`: discovers the tools with `Catalog::discover_in` and checks
//!   that a call is refused with that message. It is a child module
//!   (`#[cfg(test)] mod tests;`), so it reaches the module's private items
//!   and runs under `cargo test` in a library and in a binary alike, which
//!   a `tests/` file cannot;
//! - with `--mcp`, `mcp.rs`: `server(service)`, an `McpServer` of the
//!   module's tools (the crate then needs toolwright's `mcp` feature).
//!
//! It then prints the line that declares the module in its parent; it
//! edits no file that exists, and refuses to overwrite one without
//! `--force`.

mod module_path;
mod project;
mod render;

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use clap::{ArgGroup, Args, Subcommand};

use module_path::ModulePath;
use project::Project;

/// What `new` writes.
#[derive(Debug, Subcommand)]
pub(crate) enum New {
    /// Write a module of tools: a service, the tools calling it, hooks that
    /// refuse every call until written, and a test.
    Module(Module),
}

/// `cargo toolwright new module <path> [--read|--write|--crud|--plain] [--mcp] [--force]`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("kind").args(["read", "write", "crud", "plain"])))]
pub(crate) struct Module {
    /// The module's path in the crate, such as `catalog::products`: its
    /// folder is `src/catalog/products/`, its tools' keys start with
    /// `catalog.products.`
    #[arg(value_name = "path::to::module")]
    path: String,
    /// Tools that only read: `get` and `list` (the default).
    #[arg(long)]
    read: bool,
    /// A tool that reads (`get`) and one that writes (`create`).
    #[arg(long)]
    write: bool,
    /// `create`, `get`, `list`, `update` and `delete`: reads, writes and a
    /// destructive tool.
    #[arg(long)]
    crud: bool,
    /// One tool, `run`, declared `write` since what it does is not known.
    #[arg(long)]
    plain: bool,
    /// Also write `mcp.rs`, serving the module's tools over MCP (needs
    /// toolwright's `mcp` feature).
    #[arg(long)]
    mcp: bool,
    /// Overwrite the module's files if they exist.
    #[arg(long)]
    force: bool,
}

/// The tools a module gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `get` and `list`.
    Read,
    /// `get` and `create`.
    Write,
    /// `create`, `get`, `list`, `update`, `delete`.
    Crud,
    /// One `run` tool, declared `write`.
    Plain,
}

impl Module {
    fn kind(&self) -> Kind {
        match (self.write, self.crud, self.plain) {
            (true, _, _) => Kind::Write,
            (_, true, _) => Kind::Crud,
            (_, _, true) => Kind::Plain,
            _ => Kind::Read,
        }
    }
}

impl Kind {
    fn flag(self) -> &'static str {
        match self {
            Kind::Read => "--read",
            Kind::Write => "--write",
            Kind::Crud => "--crud",
            Kind::Plain => "--plain",
        }
    }
}

/// Writes what `new` asks for.
pub(crate) fn run(new: New) -> Result<ExitCode, String> {
    match new {
        New::Module(module) => {
            let dir = std::env::current_dir()
                .map_err(|error| format!("cannot read the current directory: {error}"))?;
            write_module(&module, &dir)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Checks everything, then writes the module into the crate at `dir`, and
/// says what is left to do. Nothing is written when a check fails.
fn write_module(module: &Module, dir: &Path) -> Result<(), String> {
    let path = ModulePath::parse(&module.path)?;
    let project = Project::at(dir)?;
    let folder = format!("src/{}", path.segments().join("/"));

    let file_form = format!("{folder}.rs");
    if project.exists(&file_form) {
        return Err(format!(
            "module `{path}` already exists as {file_form}; a {folder}/mod.rs beside it would be a second file for the same module"
        ));
    }
    // Every folder on the way must be a folder (or not exist yet).
    let mut ancestor = String::from("src");
    for segment in path.segments() {
        ancestor = format!("{ancestor}/{segment}");
        if project.exists(&ancestor) && !project.path(&ancestor).is_dir() {
            return Err(format!(
                "{ancestor} is a file, so {folder}/ cannot be a folder"
            ));
        }
    }

    let kind = module.kind();
    let mut command = format!("cargo toolwright new module {path} {}", kind.flag());
    if module.mcp {
        command.push_str(" --mcp");
    }
    let files = render::files(&path, kind, module.mcp, &command);
    let paths: Vec<String> = files
        .iter()
        .map(|file| format!("{folder}/{}", file.name))
        .collect();
    let existing: Vec<&String> = paths.iter().filter(|path| project.exists(path)).collect();
    if project.exists(&folder) && !module.force {
        let mut message = format!("{folder}/ already exists; nothing was written");
        if existing.is_empty() {
            message.push_str(". Pass --force to write the module's files into it.");
        } else {
            message.push_str(". Pass --force to overwrite:");
            for path in &existing {
                message.push_str(&format!("\n  {path}"));
            }
        }
        return Err(message);
    }
    let declarations = project.declarations(&path);

    let target = project.path(&folder);
    std::fs::create_dir_all(&target)
        .map_err(|error| format!("cannot create {folder}/: {error}"))?;
    let mut report = String::new();
    for (file, path) in files.iter().zip(&paths) {
        std::fs::write(project.path(path), &file.text)
            .map_err(|error| format!("cannot write {path}: {error}"))?;
        let verb = if existing.contains(&path) {
            "overwrote"
        } else {
            "wrote"
        };
        report.push_str(&format!("{verb} {path}\n"));
    }
    report.push('\n');
    for line in declarations {
        report.push_str(&format!("{line}\n"));
    }
    report.push('\n');
    report.push_str(&requirements(module.mcp));
    // Written at once, and not with `print!`, which panics when the reader
    // has gone: the module is written by then, whoever reads the report.
    std::io::stdout()
        .lock()
        .write_all(report.as_bytes())
        .map_err(|error| format!("the module was written, but not this report of it: {error}"))?;
    Ok(())
}

/// What the generated code needs in the crate's Cargo.toml.
fn requirements(mcp: bool) -> String {
    let version = env!("CARGO_PKG_VERSION");
    let version = version
        .rsplit_once('.')
        .map_or(version, |(major_minor, _)| major_minor);
    let toolwright = if mcp {
        format!("toolwright = {{ version = \"{version}\", features = [\"mcp\"] }}")
    } else {
        format!("toolwright = \"{version}\"")
    };
    let mut text = String::new();
    if mcp {
        text.push_str("--mcp: the crate must depend on toolwright with its `mcp` feature.\n");
    }
    text.push_str("the module needs, in Cargo.toml:\n");
    for line in [
        "[dependencies]",
        &toolwright,
        r#"serde = { version = "1", features = ["derive"] }"#,
        r#"schemars = "1""#,
        "[dev-dependencies]",
        r#"tokio = { version = "1", features = ["macros", "rt"] }"#,
    ] {
        text.push_str(&format!("    {line}\n"));
    }
    text
}

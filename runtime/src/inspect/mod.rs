//! What a binary really serves, from outside it: the inspection mode that
//! `cargo toolwright inspect`, `lock` and `check` run it in, and the tool
//! contract ([`Lock`]) they write and compare.
//!
//! An application enables the mode with one call, first thing in `main`,
//! on the tools it serves:
//!
//! ```no_run
//! use toolwright::Catalog;
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let catalog = Catalog::discover()?;
//!     // Under `cargo toolwright`, prints the tools and exits; otherwise nothing.
//!     toolwright::inspect::exit_if_asked(&catalog);
//!     // ... serve them ...
//!     Ok(())
//! }
//! ```
//!
//! Run with [`INSPECT_ENV`] set to a format, the binary prints its tools
//! in it on stdout and exits 0: `table`, `json`, `lock` (the contract, as
//! `tools.lock.json` holds it), a provider format's name (`openai`,
//! `openai-strict`, `anthropic`, `gemini`, ...; feature `providers`), `mcp`
//! (the `tools/list` answer; feature `mcp`) or `openapi` (feature
//! `openapi`). Set to `check`, it compares its tools with the lock file at
//! [`LOCK_ENV`], prints each [`Difference`], and exits 1 if one is
//! breaking. An unknown format, or a lock file missing or unreadable, is
//! a message on stderr and exit 2.
//!
//! Because the binary itself answers, the list is what really links: tools
//! of a crate nothing references by name are there too (they register
//! through `inventory`), and the schemas are the ones it serves.

use std::fmt::Write as _;
use std::io::Write as _;

use serde_json::{Value, json};

use crate::catalog::ToolEntry;

mod compare;
mod lock;

pub use compare::{Difference, Severity};
pub use lock::{LOCK_VERSION, Lock, LockError, LockedSchema, LockedTool};

/// The variable that asks a binary for its tools: a format, or `check`.
pub const INSPECT_ENV: &str = "TOOLWRIGHT_INSPECT";

/// The lock file a `check` compares with.
pub const LOCK_ENV: &str = "TOOLWRIGHT_LOCK";

/// When [`INSPECT_ENV`] is set, prints `tools` as it asks and exits the
/// process (0; 1 for a `check` that found a breaking change; 2 for a
/// request it cannot answer); otherwise returns at once. See the
/// [module](self).
pub fn exit_if_asked<'a>(tools: impl IntoIterator<Item = &'a ToolEntry>) {
    let Some(asked) = std::env::var_os(INSPECT_ENV) else {
        return;
    };
    let tools: Vec<&ToolEntry> = tools.into_iter().collect();
    let lock_file = std::env::var_os(LOCK_ENV).map(std::path::PathBuf::from);
    let code = match answer(&asked.to_string_lossy(), &tools, lock_file.as_deref()) {
        Ok(Answer { text, failed }) => {
            // Not `print!`, which panics when the reader has gone.
            let mut stdout = std::io::stdout().lock();
            let written = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush());
            match written {
                Ok(()) => i32::from(failed),
                Err(_) => 2,
            }
        }
        Err(problem) => {
            eprintln!("toolwright inspect: {problem}");
            2
        }
    };
    std::process::exit(code)
}

/// What the binary prints, and whether it reports a failure.
#[derive(Debug)]
struct Answer {
    text: String,
    failed: bool,
}

impl Answer {
    fn of(text: String) -> Self {
        Answer {
            text,
            failed: false,
        }
    }

    fn json(value: &Value) -> Self {
        let mut text = serde_json::to_string_pretty(value).expect("plain JSON");
        text.push('\n');
        Answer::of(text)
    }
}

/// The answer to `asked` about `tools`, or why there is none.
fn answer(
    asked: &str,
    tools: &[&ToolEntry],
    lock_file: Option<&std::path::Path>,
) -> Result<Answer, String> {
    match asked {
        "table" => Ok(Answer::of(table(tools))),
        "json" => Ok(Answer::json(&Value::Array(
            tools.iter().map(|tool| described(tool)).collect(),
        ))),
        "lock" => Ok(Answer::of(Lock::of(tools.iter().copied()).to_json())),
        "check" => check(tools, lock_file),
        #[cfg(feature = "mcp")]
        "mcp" => Ok(Answer::json(&json!({ "tools": crate::mcp::listed(tools) }))),
        #[cfg(feature = "openapi")]
        "openapi" => {
            let title = std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.file_stem()?.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "tools".to_owned());
            let document = crate::openapi::document(tools.iter().copied(), &title, "unversioned");
            Ok(Answer::json(&document))
        }
        other => provider(other, tools),
    }
}

/// A provider format's tool list, if `asked` names one.
#[cfg(feature = "providers")]
fn provider(asked: &str, tools: &[&ToolEntry]) -> Result<Answer, String> {
    let format: crate::providers::Format = asked.parse().map_err(|_| unknown(asked))?;
    let list = crate::providers::export(tools.iter().copied(), format)
        .map_err(|error| error.to_string())?;
    Ok(Answer::json(&list))
}

#[cfg(not(feature = "providers"))]
fn provider(asked: &str, _: &[&ToolEntry]) -> Result<Answer, String> {
    Err(unknown(asked))
}

fn unknown(asked: &str) -> String {
    format!(
        "unknown format `{asked}`; use table, json, lock, check, mcp, openapi or a provider's \
         (openai, openai-strict, openai-responses, openai-responses-strict, anthropic, gemini, \
         gemini-json-schema), as this binary's features allow"
    )
}

/// `check`: the differences from the lock file, breaking ones failing.
fn check(tools: &[&ToolEntry], lock_file: Option<&std::path::Path>) -> Result<Answer, String> {
    let path =
        lock_file.ok_or_else(|| format!("`check` needs {LOCK_ENV}, the lock file's path"))?;
    let text = std::fs::read_to_string(path).map_err(|error| {
        format!(
            "cannot read {}: {error}; run `cargo toolwright lock` to write it",
            path.display()
        )
    })?;
    let locked = Lock::from_json(&text).map_err(|error| {
        format!(
            "{}: {error}; run `cargo toolwright lock` to write it anew",
            path.display()
        )
    })?;
    let differences = locked.compare(&Lock::of(tools.iter().copied()));
    let mut out = String::new();
    for difference in &differences {
        let _ = writeln!(out, "{difference}");
    }
    let breaking = differences
        .iter()
        .filter(|d| d.severity == Severity::Breaking)
        .count();
    let _ = writeln!(
        out,
        "{} difference(s) from {}, {breaking} breaking",
        differences.len(),
        path.display()
    );
    Ok(Answer {
        text: out,
        failed: breaking > 0,
    })
}

/// One tool as `json` shows it.
fn described(tool: &ToolEntry) -> Value {
    let mut described = json!({
        "key": tool.key(),
        "name": tool.name(),
        "description": tool.description(),
        "effect": tool.effect(),
        "tags": tool.tags(),
        "input_schema": tool.input_schema(),
    });
    if let Some(title) = tool.title() {
        described["title"] = title.into();
    }
    if let Some(schema) = tool.output_schema() {
        described["output_schema"] = schema.clone();
    }
    if tool.deferred() {
        described["deferred"] = true.into();
    }
    if let Some(hint) = tool.search_hint() {
        described["search_hint"] = hint.into();
    }
    described
}

/// The tools as a table: name, key, effect, tags; then how many.
fn table(tools: &[&ToolEntry]) -> String {
    let rows: Vec<[String; 4]> = tools
        .iter()
        .map(|tool| {
            [
                tool.name().to_owned(),
                tool.key().to_owned(),
                tool.effect().to_string(),
                tool.tags().join(","),
            ]
        })
        .collect();
    let header = ["NAME", "KEY", "EFFECT", "TAGS"].map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let line = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect::<Vec<_>>()
            .join("  ");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out, "{} tools", rows.len());
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::answer;
    use crate::dynamic::DynamicTool;
    use crate::effect::Effect;

    #[test]
    fn each_format_answers_and_an_unknown_one_says_which_there_are() {
        let add = DynamicTool::builder("math.add", "add")
            .description("Add two numbers.")
            .effect(Effect::Read)
            .input_schema(json!({"type": "object", "properties": {}}))
            .handler(|_| Box::pin(async { Ok(json!(null)) }))
            .build()
            .unwrap()
            .into_entry();
        let tools = [&add];
        let table = answer("table", &tools, None).unwrap().text;
        assert_eq!(
            table,
            "NAME  KEY       EFFECT  TAGS\nadd   math.add  read\n1 tools\n"
        );
        let json = answer("json", &tools, None).unwrap().text;
        assert!(json.contains("\"key\": \"math.add\""));
        let problem = answer("yaml", &tools, None).unwrap_err();
        assert!(problem.contains("unknown format `yaml`"), "{problem}");
        let missing = answer("check", &tools, None).unwrap_err();
        assert!(missing.contains("TOOLWRIGHT_LOCK"), "{missing}");
    }
}

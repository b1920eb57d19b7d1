//! `cargo toolwright new module`: written by the scaffolding change.

use std::process::ExitCode;

use clap::Subcommand;

/// What `new` writes.
#[derive(Debug, Subcommand)]
pub(crate) enum New {}

/// Writes what `new` asks for.
pub(crate) fn run(new: New) -> Result<ExitCode, String> {
    match new {}
}

//! `cargo toolwright`: scaffold a module of tools, inspect the tools a
//! binary really links, lock the tool contract and check it in CI.
//!
//! - `cargo toolwright new module <path::to::module> [--read|--write|--crud|--plain] [--mcp] [--force]`
//!   writes a module of tools calling a service, with hooks that refuse
//!   until written and a test.
//! - `cargo toolwright inspect [--format F] [--bin B]` builds and runs the
//!   crate's binary in inspection mode (the binary calls
//!   `toolwright::inspect::exit_if_asked` first thing) and prints its tools.
//! - `cargo toolwright lock` writes `tools.lock.json`; `cargo toolwright
//!   check` compares the tools with it, and exits 1 on a breaking change.

use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

mod new;
mod run;

/// Cargo runs `cargo-toolwright toolwright <args>` for `cargo toolwright <args>`.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo")]
enum Cargo {
    /// Scaffold, inspect, lock and check toolwright tools.
    #[command(version)]
    Toolwright(Toolwright),
}

#[derive(Debug, Args)]
struct Toolwright {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write new code into this crate.
    #[command(subcommand)]
    New(new::New),
    /// Print the tools the crate's binary serves.
    Inspect(run::Inspect),
    /// Write `tools.lock.json`: the tool contract as it is now.
    Lock(run::Lock),
    /// Compare the tools with `tools.lock.json`; exit 1 on a breaking change.
    Check(run::Check),
}

fn main() -> ExitCode {
    let Cargo::Toolwright(toolwright) = Cargo::parse();
    let done = match toolwright.command {
        Command::New(new) => new::run(new),
        Command::Inspect(inspect) => run::inspect(inspect),
        Command::Lock(lock) => run::lock(lock),
        Command::Check(check) => run::check(check),
    };
    match done {
        Ok(code) => code,
        Err(error) => {
            eprintln!("cargo toolwright: {error}");
            ExitCode::from(2)
        }
    }
}

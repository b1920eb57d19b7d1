//! `inspect`, `lock` and `check`: the crate's binary, built, then run in
//! toolwright's inspection mode (`toolwright::inspect::exit_if_asked`),
//! which answers with its own tools.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::Args;

/// The variable that asks the binary for its tools (`toolwright::inspect::INSPECT_ENV`).
const INSPECT_ENV: &str = "TOOLWRIGHT_INSPECT";
/// The lock file a check compares with (`toolwright::inspect::LOCK_ENV`).
const LOCK_ENV: &str = "TOOLWRIGHT_LOCK";
/// How long a built binary has to answer: one that does not call
/// `exit_if_asked` would serve instead, and never end.
const ANSWER_WITHIN: Duration = Duration::from_secs(60);

/// Which binary of which package: as `cargo run` picks them.
#[derive(Debug, Args)]
pub(crate) struct Target {
    /// The binary to run, when the package has several.
    #[arg(long, value_name = "NAME")]
    bin: Option<String>,
    /// The package, in a workspace.
    #[arg(short, long, value_name = "SPEC")]
    package: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct Inspect {
    /// table, json, lock, openai, openai-strict, openai-responses,
    /// openai-responses-strict, anthropic, gemini, gemini-json-schema, mcp
    /// or openapi (the last two as the binary's toolwright features allow).
    #[arg(long, default_value = "table")]
    format: String,
    #[command(flatten)]
    target: Target,
}

#[derive(Debug, Args)]
pub(crate) struct Lock {
    /// Where to write the lock.
    #[arg(long, default_value = "tools.lock.json")]
    output: PathBuf,
    #[command(flatten)]
    target: Target,
}

#[derive(Debug, Args)]
pub(crate) struct Check {
    /// The lock to compare with.
    #[arg(long, default_value = "tools.lock.json")]
    lock: PathBuf,
    #[command(flatten)]
    target: Target,
}

/// Prints the binary's tools.
pub(crate) fn inspect(inspect: Inspect) -> Result<ExitCode, String> {
    let binary = build(&inspect.target)?;
    let answer = ask(&binary, &inspect.format, None)?;
    print!("{}", answer.stdout);
    Ok(answer.code)
}

/// Writes the binary's contract to the lock file.
pub(crate) fn lock(lock: Lock) -> Result<ExitCode, String> {
    let binary = build(&lock.target)?;
    let answer = ask(&binary, "lock", None)?;
    if answer.code != ExitCode::SUCCESS {
        return Ok(answer.code);
    }
    std::fs::write(&lock.output, &answer.stdout)
        .map_err(|error| format!("cannot write {}: {error}", lock.output.display()))?;
    let tools = answer.stdout.matches("\"key\":").count();
    eprintln!("wrote {}: {tools} tools", lock.output.display());
    Ok(ExitCode::SUCCESS)
}

/// Compares the binary's tools with the lock file: exit 1 on a breaking
/// difference, each printed with its reason.
pub(crate) fn check(check: Check) -> Result<ExitCode, String> {
    if !check.lock.is_file() {
        return Err(format!(
            "no {} here: run `cargo toolwright lock` to write it, and commit it",
            check.lock.display()
        ));
    }
    let lock = std::path::absolute(&check.lock)
        .map_err(|error| format!("cannot find {}: {error}", check.lock.display()))?;
    let binary = build(&check.target)?;
    let answer = ask(&binary, "check", Some(&lock))?;
    print!("{}", answer.stdout);
    Ok(answer.code)
}

/// Builds the target with cargo; the path of its executable.
fn build(target: &Target) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command.args([
        "build",
        "--quiet",
        "--message-format=json-render-diagnostics",
    ]);
    if let Some(bin) = &target.bin {
        command.args(["--bin", bin]);
    } else {
        command.arg("--bins");
    }
    if let Some(package) = &target.package {
        command.args(["--package", package]);
    }
    let output = command
        .stderr(Stdio::inherit())
        .output()
        .map_err(|error| format!("cannot run cargo: {error}"))?;
    if !output.status.success() {
        return Err("the build failed (cargo's messages are above)".into());
    }
    let executables = executables(&String::from_utf8_lossy(&output.stdout));
    match executables.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err("the package has no binary: inspect runs the application's own".into()),
        several => Err(format!(
            "the package has {} binaries: say which with --bin",
            several.len()
        )),
    }
}

/// The executables cargo's JSON messages say it built.
fn executables(messages: &str) -> Vec<PathBuf> {
    // `"executable":"<path>"` in a `compiler-artifact` message; `null`
    // for libraries. Paths are JSON strings: unescape what paths hold.
    let mut found = Vec::new();
    for line in messages.lines() {
        let Some((_, rest)) = line.split_once("\"executable\":\"") else {
            continue;
        };
        let mut path = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' => match chars.next() {
                    Some('n') => path.push('\n'),
                    Some('t') => path.push('\t'),
                    Some(other) => path.push(other),
                    None => break,
                },
                c => path.push(c),
            }
        }
        found.push(PathBuf::from(path));
    }
    found.sort();
    found.dedup();
    found
}

/// What the binary answered.
struct Answer {
    stdout: String,
    code: ExitCode,
}

/// Runs `binary` in inspection mode, asking `asked`; its answer, or why
/// there is none.
fn ask(binary: &Path, asked: &str, lock: Option<&Path>) -> Result<Answer, String> {
    let mut command = Command::new(binary);
    command
        .env(INSPECT_ENV, asked)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(lock) = lock {
        command.env(LOCK_ENV, lock);
    }
    let mut child = command
        .spawn()
        .map_err(|error| format!("cannot run {}: {error}", binary.display()))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|error| format!("waiting for {}: {error}", binary.display()))?
        {
            break status;
        }
        if started.elapsed() > ANSWER_WITHIN {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{} did not answer within {ANSWER_WITHIN:?}: call \
                 `toolwright::inspect::exit_if_asked(&tools)` first thing in its `main`",
                binary.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stdout = reader.join().unwrap_or_default();
    let code = match status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(1) => ExitCode::from(1),
        Some(2) => ExitCode::from(2),
        _ => {
            return Err(format!(
                "{} ended without answering ({status}): does its `main` call \
                 `toolwright::inspect::exit_if_asked` first thing?",
                binary.display()
            ));
        }
    };
    Ok(Answer { stdout, code })
}

#[cfg(test)]
mod tests {
    use super::executables;
    use std::path::PathBuf;

    #[test]
    fn the_built_executable_is_read_from_cargos_messages() {
        let messages = concat!(
            r#"{"reason":"compiler-artifact","target":{"kind":["lib"]},"executable":null}"#,
            "\n",
            r#"{"reason":"compiler-artifact","target":{"kind":["bin"]},"executable":"/t/debug/shop","fresh":true}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
        );
        assert_eq!(executables(messages), [PathBuf::from("/t/debug/shop")]);
    }
}

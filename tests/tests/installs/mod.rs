//! Pinned clients and servers from npm and PyPI, installed under the
//! target directory on a test's first run and reused while their pins are
//! unchanged; shared by the test binaries that drive real MCP peers.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether a test that cannot set up what it needs fails (`CI=true`) or
/// says in one line that it skipped.
pub(crate) fn must_run() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// `npm ci` of the `package.json` and `package-lock.json` in `source`
/// (plus `files` beside them) into a directory `name` under the target
/// directory, which it returns.
pub(crate) fn npm_ci(source: &Path, name: &str, files: &[&str]) -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    for file in ["package.json", "package-lock.json"].iter().chain(files) {
        std::fs::copy(source.join(file), dir.join(file))
            .map_err(|e| format!("copying {file}: {e}"))?;
    }
    installed_once(&dir, &source.join("package-lock.json"), || {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--silent"])
            .current_dir(&dir))
    })?;
    Ok(dir)
}

/// Runs `install` into `dir` unless it last ran there for the same `pins`
/// (a requirements or lock file), which a stamp in `dir` records. One
/// install at a time: tests run side by side (threads, or processes under
/// nextest), and two creating the same virtualenv at once fail.
pub(crate) fn installed_once(
    dir: &Path,
    pins: &Path,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    let lock_path = dir.with_extension("lock");
    let lock = std::fs::File::create(&lock_path)
        .map_err(|error| format!("creating {}: {error}", lock_path.display()))?;
    // Held until this returns; released when `lock` is dropped.
    lock.lock()
        .map_err(|error| format!("locking {}: {error}", lock_path.display()))?;
    let pinned = std::fs::read_to_string(pins)
        .map_err(|error| format!("reading {}: {error}", pins.display()))?;
    let stamp = dir.join("installed.txt");
    if std::fs::read_to_string(&stamp).ok().as_deref() != Some(pinned.as_str()) {
        install()?;
        std::fs::write(&stamp, pinned)
            .map_err(|error| format!("writing {}: {error}", stamp.display()))?;
    }
    Ok(())
}

/// A virtualenv with the official Python MCP SDK pinned in
/// `tests/python/requirements.txt`, or why it could not be set up.
pub(crate) fn python_with_mcp_sdk() -> Result<PathBuf, String> {
    python_venv("python-mcp", "requirements.txt")
}

/// The pinned Python SDK, or `None` after a one-line message when it
/// cannot be set up here (no `python3`, no PyPI). On CI (`CI=true`) that
/// fails the test instead.
pub(crate) fn python_or_skip(test: &str) -> Option<PathBuf> {
    match python_with_mcp_sdk() {
        Ok(python) => Some(python),
        Err(why) if !must_run() => {
            eprintln!("skipped {test}: the Python MCP SDK is unavailable ({why})");
            None
        }
        Err(why) => panic!("{why}"),
    }
}

/// The Python of a virtualenv `name` under the target directory with the
/// packages pinned in `tests/python/<requirements>`, installed on the
/// first run; or why it could not be set up. The tests of any crate of the
/// workspace find the pins.
pub(crate) fn python_venv(name: &str, requirements: &str) -> Result<PathBuf, String> {
    let requirements = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("tests/python"))
        .find(|dir| dir.is_dir())
        .ok_or("no tests/python above this crate")?
        .join(requirements);
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    installed_once(&venv, &requirements, || {
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
        run(Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements))
    })?;
    Ok(venv.join("bin/python"))
}

/// Runs `command`; an error saying how it failed.
pub(crate) fn run(command: &mut Command) -> Result<(), String> {
    let status = command
        .status()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?} failed: {status}"))
    }
}

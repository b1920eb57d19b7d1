//! Soak test of the toolwright executor: a million calls with mixed
//! outcomes, made concurrently on a multi-thread tokio runtime.
//!
//! ```sh
//! cargo run --release -p soak                          # 1,000,000 calls, 64 callers
//! cargo run --release -p soak -- --calls 200000 --concurrency 16
//! cargo run --release -p soak -- lists                 # tools/list memory, 20 clients
//! ```
//!
//! Options: `--calls N` (default 1,000,000), `--concurrency N` caller tasks
//! (default 64), `--sample-every N` calls between memory samples (default
//! 50,000, fewer when the run is short). The exit status is 0 when every
//! check passes, 1 when one fails, 2 on a usage error.
//!
//! Each call is one of thirteen kinds, interleaved pseudo-randomly (the
//! same way on every run): ok, tool error, panic, timeout (a tool with
//! `timeout = "1ms"`), invalid arguments, denied by `authorize`, dropped by
//! the caller after one poll (while the body waits, or after the body has
//! returned, while the finalizer runs: two kinds), and abandoned by the
//! caller's own 1 ms `tokio::time::timeout`. The tools of these nine kinds
//! inject a REQUEST-scoped dependency whose provider counts its builds and registers a finalizer
//! that counts its runs per [`Outcome`](toolwright::scope::Outcome), both
//! attributed to the kind of call that caused them. Four more kinds (ok,
//! panic, timeout, dropped) call public tools that inject nothing, which
//! take the executor's direct path: they build nothing, and must neither
//! answer wrongly nor leak.
//!
//! What a passing run proves, at this volume and under this concurrency:
//!
//! - every call gets the answer its kind expects (the value, `Tool` with
//!   the tool's error kept, `Panicked`, `Timeout`, `InvalidArguments`,
//!   `Denied`; a dropped or abandoned call never completes);
//! - every REQUEST finalizer runs exactly once: finalizer runs equal
//!   dependency builds, overall and per kind, including for calls the caller
//!   dropped, before or during the close, whose finalizers the executor
//!   hands to the runtime (the soak waits for those counters to stop
//!   changing, within a bounded time);
//! - each finalizer receives its call's outcome (`Ok`, `Error`, `Panicked`,
//!   `Cancelled`), and no body runs, so nothing is built, for a call refused
//!   by validation or `authorize`;
//! - no dependency outlives its call: every one built is dropped again;
//! - resident memory (VmRSS) is flat after warm-up, within a generous bound.
//!
//! It prints a table per kind of call, the memory samples and each check.
//! A default run takes a couple of seconds in release mode on two cores; its
//! calls per second include the cancelled calls' millisecond waits, so they
//! are no benchmark (`BENCHMARKS.md` has those).
//!
//! `soak lists` measures something else: the memory of a server answering
//! `tools/list` for thousands of tools to concurrent MCP clients (see the
//! `lists` module; `soak lists --help` for its options).

mod calls;
mod ledger;
mod lists;
mod memory;
mod report;
mod tools;

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use toolwright::Executor;

use crate::calls::{CALL_KIND, Kind, Tally};
use crate::ledger::Ledger;
use crate::memory::{Moment, Samples};
use crate::report::{Report, Settling};

const USAGE: &str = "\
usage: soak [--calls N] [--concurrency N] [--sample-every N]
       soak lists [--help]   the memory of tools/list under concurrent clients

  --calls N          calls to make (default 1,000,000)
  --concurrency N    caller tasks making them (default 64)
  --sample-every N   calls between resident-memory samples (default 50,000,
                     or a quarter of the calls when that is fewer)";

/// What the command line asked for.
#[derive(Debug, Clone, Copy)]
struct Options {
    calls: u64,
    concurrency: usize,
    sample_every: u64,
}

impl Options {
    /// Parses the arguments (without the program name); `Ok(None)` for `--help`.
    fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
        let mut calls = 1_000_000;
        let mut concurrency = 64;
        let mut sample_every = None;
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            if flag == "-h" || flag == "--help" {
                return Ok(None);
            }
            let value = args
                .next()
                .ok_or_else(|| format!("`{flag}` needs a value"))?;
            let number = value
                .replace('_', "")
                .parse::<u64>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("`{flag} {value}`: expected a positive whole number"))?;
            match flag.as_str() {
                "--calls" => calls = number,
                "--concurrency" => {
                    concurrency = usize::try_from(number)
                        .map_err(|_| format!("`--concurrency {value}` is too large"))?;
                }
                "--sample-every" => sample_every = Some(number),
                _ => return Err(format!("unknown option `{flag}`")),
            }
        }
        Ok(Some(Options {
            calls,
            concurrency,
            // At least four samples, so that a short run can still be judged.
            sample_every: sample_every.unwrap_or((calls / 4).clamp(1, 50_000)),
        }))
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|mode| mode == "lists") {
        return lists::main(args.skip(1));
    }
    let options = match Options::parse(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("soak: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    silence_deliberate_panics();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("soak: cannot start the tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let report = match runtime.block_on(soak(options)) {
        Ok(report) => report,
        Err(error) => {
            eprintln!("soak: {error}");
            return ExitCode::FAILURE;
        }
    };
    let checks = report.checks();
    report.print(&checks);
    let failed: Vec<_> = checks.iter().filter(|check| !check.passed).collect();
    if failed.is_empty() {
        println!("\nsoak: PASS");
        ExitCode::SUCCESS
    } else {
        eprintln!("\nsoak: FAIL ({} of {} checks)", failed.len(), checks.len());
        for check in failed {
            eprintln!("  - {}", check.what);
        }
        ExitCode::FAILURE
    }
}

/// Keeps the default panic hook from printing a message and location for
/// each of the tens of thousands of deliberate panics; any other panic is
/// still reported.
fn silence_deliberate_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied());
        if message != Some(tools::DELIBERATE_PANIC) {
            default(info);
        }
    }));
}

/// What the caller tasks share.
#[derive(Debug)]
struct Run {
    calls: u64,
    sample_every: u64,
    /// The next call to make.
    next: AtomicU64,
    /// Calls that have returned (or been dropped).
    done: AtomicU64,
    samples: Samples,
}

/// Makes the calls, waits for the finalizers, and gathers the report.
async fn soak(options: Options) -> Result<Report, Box<dyn Error>> {
    let ledger = Arc::new(Ledger::default());
    let executor = Executor::new(tools::catalog()?, tools::container(ledger.clone()))?;
    let run = Arc::new(Run {
        calls: options.calls,
        sample_every: options.sample_every,
        next: AtomicU64::new(0),
        done: AtomicU64::new(0),
        samples: Samples::default(),
    });

    run.samples.take(Moment::Start);
    let started = Instant::now();
    let mut callers = JoinSet::new();
    for _ in 0..options.concurrency {
        callers.spawn(caller(executor.clone(), run.clone()));
    }
    let mut tally = Tally::default();
    while let Some(joined) = callers.join_next().await {
        tally.merge(joined.map_err(|error| format!("a caller task failed: {error}"))?);
    }
    let elapsed = started.elapsed();

    let settling = settle(&ledger).await;
    run.samples.take(Moment::Settled);
    let samples = Arc::try_unwrap(run)
        .map_err(|_| "a caller task still holds the run")?
        .samples
        .into_sorted();
    Ok(Report {
        calls: options.calls,
        concurrency: options.concurrency,
        threads: tokio::runtime::Handle::current().metrics().num_workers(),
        elapsed,
        tally,
        counts: ledger.snapshot(),
        settling,
        samples,
    })
}

/// One caller task: takes the next call number until all are made, makes
/// that call, and samples memory at every `sample_every`-th return.
async fn caller(executor: Executor, run: Arc<Run>) -> Tally {
    let mut tally = Tally::default();
    loop {
        let call = run.next.fetch_add(1, Ordering::Relaxed);
        if call >= run.calls {
            return tally;
        }
        let kind = Kind::of_call(call);
        let answer = CALL_KIND.scope(kind, kind.make(&executor, call)).await;
        tally.record(kind, answer);
        let done = run.done.fetch_add(1, Ordering::Relaxed) + 1;
        if done.is_multiple_of(run.sample_every) {
            run.samples.take(Moment::After(done));
        }
    }
}

/// Waits for the finalizers the executor handed to the runtime (those of
/// dropped and abandoned calls) by polling the counters until they have not
/// changed for 250 ms, for at most 10 s. Waiting for quiet rather than for
/// balance also catches a finalizer that runs twice.
async fn settle(ledger: &Ledger) -> Settling {
    /// How long the counters must hold still.
    const QUIET: Duration = Duration::from_millis(250);
    /// How long to wait at most.
    const SETTLE_LIMIT: Duration = Duration::from_secs(10);
    const POLL: Duration = Duration::from_millis(5);

    let start = Instant::now();
    let mut last = ledger.snapshot();
    let mut last_change = Duration::ZERO;
    loop {
        tokio::time::sleep(POLL).await;
        let now = ledger.snapshot();
        if now != last {
            last = now;
            last_change = start.elapsed();
        } else if start.elapsed() - last_change >= QUIET {
            return Settling {
                last_change,
                quiet: QUIET,
                stable: true,
            };
        }
        if start.elapsed() >= SETTLE_LIMIT {
            return Settling {
                last_change,
                quiet: QUIET,
                stable: false,
            };
        }
    }
}

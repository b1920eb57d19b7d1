//! The summary the soak prints, and the checks that decide its exit status.

use std::time::Duration;

use crate::calls::{Builds, Kind, Tally};
use crate::ledger::{Counts, OUTCOMES, outcome_index};
use crate::memory::{self, Moment, Sample};

/// How the wait for finalizers handed to the runtime ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settling {
    /// From the last call's return to the last change of the counters.
    pub(crate) last_change: Duration,
    /// How long the counters had to stay unchanged.
    pub(crate) quiet: Duration,
    /// Whether they did, before the time limit.
    pub(crate) stable: bool,
}

/// Everything a run measured.
#[derive(Debug)]
pub(crate) struct Report {
    /// Calls asked for.
    pub(crate) calls: u64,
    /// Caller tasks.
    pub(crate) concurrency: usize,
    /// The runtime's worker threads.
    pub(crate) threads: usize,
    /// From the first call to the last call's return.
    pub(crate) elapsed: Duration,
    /// What the callers saw.
    pub(crate) tally: Tally,
    /// What the provider and its finalizers counted, once settled.
    pub(crate) counts: Counts,
    /// How the wait for the finalizers ended.
    pub(crate) settling: Settling,
    /// Resident memory over the run.
    pub(crate) samples: Vec<Sample>,
}

/// One verdict of the run.
#[derive(Debug)]
pub(crate) struct Check {
    /// Whether it held.
    pub(crate) passed: bool,
    /// What was checked, with the numbers (and, on failure, what went wrong).
    pub(crate) what: String,
}

impl Check {
    fn new(passed: bool, what: String) -> Self {
        Check { passed, what }
    }
}

impl Report {
    /// Prints the summary: the table per kind, the settling, memory, checks.
    pub(crate) fn print(&self, checks: &[Check]) {
        let seconds = self.elapsed.as_secs_f64();
        println!(
            "toolwright soak: {} calls from {} concurrent callers on {} runtime worker threads",
            grouped(self.calls),
            self.concurrency,
            self.threads,
        );
        println!(
            "ran in {seconds:.2} s ({} calls/s)\n",
            grouped((self.tally.total() as f64 / seconds.max(1e-9)) as u64),
        );
        self.print_table();
        println!(
            "\nfinalizers settled: the counters last changed {} ms after the last call returned \
             ({}, quiet for {} ms)",
            self.settling.last_change.as_millis(),
            if self.settling.stable {
                "then held"
            } else {
                "still changing at the time limit"
            },
            self.settling.quiet.as_millis(),
        );
        println!(
            "dependencies built {}, finalizers run {}, dependencies still alive {}",
            grouped(self.counts.all_builds()),
            grouped(self.counts.all_finalized()),
            self.counts.alive,
        );
        self.print_memory();
        println!("\nchecks");
        for check in checks {
            let verdict = if check.passed { "PASS" } else { "FAIL" };
            println!("  {verdict}  {}", check.what);
        }
    }

    fn print_table(&self) {
        const RULE: usize = 102;
        println!("{:>57}  finalizers run, by outcome", "");
        println!(
            "{:<22} {:>10} {:>12} {:>10}  {:>10} {:>10} {:>10} {:>10}",
            "kind", "calls", "as expected", "built", "ok", "error", "panicked", "cancelled"
        );
        println!("{}", "-".repeat(RULE));
        let row = |label: &str, sent: u64, expected: u64, built: u64, finalized: [u64; 5]| {
            println!(
                "{:<22} {:>10} {:>12} {:>10}  {:>10} {:>10} {:>10} {:>10}",
                label,
                grouped(sent),
                grouped(expected),
                grouped(built),
                grouped(finalized[0]),
                grouped(finalized[1]),
                grouped(finalized[2]),
                grouped(finalized[3]),
            );
        };
        let mut totals = [0u64; OUTCOMES.len()];
        for kind in Kind::ALL {
            let i = kind.index();
            let finalized = self.counts.finalized(Some(kind));
            totals.iter_mut().zip(finalized).for_each(|(t, n)| *t += n);
            row(
                kind.label(),
                self.tally.sent[i],
                self.tally.sent[i] - self.tally.unexpected[i],
                self.counts.builds(Some(kind)),
                finalized,
            );
        }
        if self.counts.builds(None) + self.counts.finalized_total(None) > 0 {
            let finalized = self.counts.finalized(None);
            totals.iter_mut().zip(finalized).for_each(|(t, n)| *t += n);
            row(
                "(outside any call)",
                0,
                0,
                self.counts.builds(None),
                finalized,
            );
        }
        println!("{}", "-".repeat(RULE));
        let unexpected: u64 = self.tally.unexpected.iter().sum();
        row(
            "total",
            self.tally.total(),
            self.tally.total() - unexpected,
            self.counts.all_builds(),
            totals,
        );
        if totals[4] > 0 {
            println!(
                "({} finalizers received an outcome of another kind)",
                totals[4]
            );
        }
    }

    fn print_memory(&self) {
        println!("\nresident memory (VmRSS)");
        if self.samples.is_empty() {
            println!("  not available on this platform (no /proc/self/status)");
            return;
        }
        let warm_up = memory::warm_up_calls(self.calls);
        println!("  {:>10}  {:>10}", "calls", "RSS");
        for sample in &self.samples {
            let (when, note) = match sample.moment {
                Moment::Start => ("0".to_owned(), "before the first call"),
                Moment::After(done) if done < warm_up => (grouped(done), "warm-up"),
                Moment::After(done) => (grouped(done), ""),
                Moment::Settled => (grouped(self.calls), "after the finalizers settled"),
            };
            let line = format!("  {when:>10}  {:>10}  {note}", mib(sample.bytes));
            println!("{}", line.trim_end());
        }
        match memory::judge(&self.samples, self.calls) {
            Some(growth) => println!(
                "growth after warm-up: {:+.1} MiB ({} -> {}), bound {}",
                growth.bytes() as f64 / MIB,
                mib(growth.from.bytes),
                mib(growth.to.bytes),
                mib(growth.bound),
            ),
            None => println!("too few samples after warm-up to judge growth"),
        }
    }

    /// Every check, in the order printed.
    pub(crate) fn checks(&self) -> Vec<Check> {
        vec![
            self.answers(),
            self.balance(),
            self.outcomes(),
            self.builds_per_call(),
            self.released(),
            self.settled(),
            self.memory(),
        ]
    }

    /// Every caller got the answer its kind of call expects.
    fn answers(&self) -> Check {
        let wrong: Vec<String> = Kind::ALL
            .into_iter()
            .filter(|kind| self.tally.unexpected[kind.index()] > 0)
            .map(|kind| {
                let first = self.tally.first_unexpected[kind.index()].as_deref();
                format!(
                    "{}: {} unexpected, the first: {}",
                    kind.label(),
                    grouped(self.tally.unexpected[kind.index()]),
                    first.unwrap_or("?").chars().take(300).collect::<String>(),
                )
            })
            .collect();
        let mut what = format!(
            "every one of {} calls answered as its kind expects",
            grouped(self.tally.total())
        );
        if self.tally.total() != self.calls {
            what += &format!(" (but {} were asked for)", grouped(self.calls));
        }
        if !wrong.is_empty() {
            what += &format!(": {}", wrong.join("; "));
        }
        Check::new(wrong.is_empty() && self.tally.total() == self.calls, what)
    }

    /// Finalizers ran exactly as often as dependencies were built, overall
    /// and for each kind of call.
    fn balance(&self) -> Check {
        let (built, finalized) = (self.counts.all_builds(), self.counts.all_finalized());
        let uneven: Vec<String> = Kind::ALL
            .map(Some)
            .into_iter()
            .chain([None])
            .filter(|&kind| self.counts.builds(kind) != self.counts.finalized_total(kind))
            .map(|kind| {
                format!(
                    "{}: {} built, {} finalized",
                    kind.map_or("(outside any call)", Kind::label),
                    grouped(self.counts.builds(kind)),
                    grouped(self.counts.finalized_total(kind)),
                )
            })
            .collect();
        let mut what = format!(
            "finalizers ran exactly as often as request dependencies were built \
             ({} built, {} finalizers run)",
            grouped(built),
            grouped(finalized),
        );
        if !uneven.is_empty() {
            what += &format!(": {}", uneven.join("; "));
        }
        Check::new(uneven.is_empty() && built == finalized, what)
    }

    /// Each finalizer received the outcome of the call that built its
    /// dependency.
    fn outcomes(&self) -> Check {
        let wrong: Vec<String> = Kind::ALL
            .into_iter()
            .filter_map(|kind| {
                let finalized = self.counts.finalized(Some(kind));
                let total: u64 = finalized.iter().sum();
                let right = kind.outcome().map_or(0, |o| finalized[outcome_index(o)]);
                (right != total).then(|| {
                    let seen: Vec<String> = OUTCOMES
                        .iter()
                        .zip(finalized)
                        .filter(|(_, n)| *n > 0)
                        .map(|(name, n)| format!("{name} {}", grouped(n)))
                        .collect();
                    format!(
                        "{} expected {}, saw {}",
                        kind.label(),
                        kind.outcome()
                            .map_or("no finalizer".to_owned(), |o| format!("{o:?}")),
                        seen.join(", "),
                    )
                })
            })
            .collect();
        let mut what = "every finalizer received its call's outcome \
                        (ok and dropped while closing: Ok, tool error: Error, \
                        panic: Panicked, timeout/dropped/abandoned: Cancelled)"
            .to_owned();
        if !wrong.is_empty() {
            what += &format!(": {}", wrong.join("; "));
        }
        Check::new(wrong.is_empty(), what)
    }

    /// Calls that ran their body built the dependency exactly once; calls
    /// refused before it never did.
    fn builds_per_call(&self) -> Check {
        let mut wrong = Vec::new();
        let mut cancelled_early = 0;
        for kind in Kind::ALL {
            let (sent, built) = (
                self.tally.sent[kind.index()],
                self.counts.builds(Some(kind)),
            );
            let fits = match kind.builds() {
                Builds::EveryCall => built == sent,
                Builds::AtMostEveryCall => {
                    cancelled_early += sent.saturating_sub(built);
                    built <= sent
                }
                Builds::Never => built == 0,
            };
            if !fits {
                wrong.push(format!(
                    "{}: {} calls, {} built",
                    kind.label(),
                    grouped(sent),
                    grouped(built)
                ));
            }
        }
        if self.counts.builds(None) > 0 {
            wrong.push(format!(
                "{} built outside any soak call",
                grouped(self.counts.builds(None))
            ));
        }
        let mut what = format!(
            "one dependency per call of ok, tool error, panic and both dropped kinds; none for invalid \
             arguments, denied or any direct call; at most one per timeout or abandoned \
             call ({} of those cancelled before building it)",
            grouped(cancelled_early),
        );
        if !wrong.is_empty() {
            what += &format!(": {}", wrong.join("; "));
        }
        Check::new(wrong.is_empty(), what)
    }

    /// Every dependency was dropped: no call's scope outlived it.
    fn released(&self) -> Check {
        Check::new(
            self.counts.alive == 0,
            format!(
                "no dependency outlived its call ({} still alive)",
                self.counts.alive
            ),
        )
    }

    /// The finalizers handed to the runtime all ran before the time limit.
    fn settled(&self) -> Check {
        Check::new(
            self.settling.stable,
            format!(
                "finalizer counters stopped changing ({} ms after the last call)",
                self.settling.last_change.as_millis()
            ),
        )
    }

    /// Resident memory stayed flat after warm-up.
    fn memory(&self) -> Check {
        match memory::judge(&self.samples, self.calls) {
            Some(growth) => Check::new(
                growth.is_flat(),
                format!(
                    "resident memory flat after warm-up ({:+.1} MiB, bound {})",
                    growth.bytes() as f64 / MIB,
                    mib(growth.bound)
                ),
            ),
            None => Check::new(
                true,
                "resident memory not judged (too few samples after warm-up)".to_owned(),
            ),
        }
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// Bytes as MiB, one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / MIB)
}

/// `1234567` as `1,234,567`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

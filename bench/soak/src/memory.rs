//! Resident memory, sampled during the run, and whether it stayed flat.

use std::sync::Mutex;

/// The share of the calls treated as warm-up, during which memory may grow:
/// the allocator's per-thread arenas, tokio's task and timer storage and
/// the executor's first-use allocations grow to a high-water mark set by the
/// concurrency, and then hold.
const WARM_UP_DIVISOR: u64 = 5;

/// Growth always allowed after warm-up, however small the process.
const ALLOWED_GROWTH_BYTES: u64 = 20 * 1024 * 1024;

/// The process's resident set size (`VmRSS` in `/proc/self/status`), in
/// bytes; `None` where there is no such file.
pub(crate) fn resident_bytes() -> Option<u64> {
    vm_rss("/proc/self/status")
}

/// The resident set size of the process `pid`, as [`resident_bytes`].
pub(crate) fn resident_bytes_of(pid: u32) -> Option<u64> {
    vm_rss(&format!("/proc/{pid}/status"))
}

/// `VmRSS` of a `/proc/*/status` file, in bytes.
fn vm_rss(status: &str) -> Option<u64> {
    let status = std::fs::read_to_string(status).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<u64>()
        .ok()?;
    Some(kib * 1024)
}

/// When a sample was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Moment {
    /// Before the first call.
    Start,
    /// After this many calls had returned.
    After(u64),
    /// After the last call, once the finalizers had settled.
    Settled,
}

/// One reading of resident memory.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Sample {
    /// When it was taken.
    pub(crate) moment: Moment,
    /// Resident bytes.
    pub(crate) bytes: u64,
}

/// Samples taken by whichever caller task reaches a sampling point.
#[derive(Debug, Default)]
pub(crate) struct Samples(Mutex<Vec<Sample>>);

impl Samples {
    /// Reads resident memory now, if this platform can.
    pub(crate) fn take(&self, moment: Moment) {
        if let Some(bytes) = resident_bytes() {
            let mut samples = self.0.lock().unwrap_or_else(|e| e.into_inner());
            samples.push(Sample { moment, bytes });
        }
    }

    /// Every sample, in order.
    pub(crate) fn into_sorted(self) -> Vec<Sample> {
        let mut samples = self.0.into_inner().unwrap_or_else(|e| e.into_inner());
        samples.sort_by_key(|sample| sample.moment);
        samples
    }
}

/// Memory growth after warm-up, and the bound it is held to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Growth {
    /// The first sample after warm-up.
    pub(crate) from: Sample,
    /// The last sample (after settling, when there is one).
    pub(crate) to: Sample,
    /// The largest growth that passes.
    pub(crate) bound: u64,
}

impl Growth {
    /// Growth from the first post-warm-up sample to the last; negative when
    /// memory was returned.
    pub(crate) fn bytes(&self) -> i128 {
        i128::from(self.to.bytes) - i128::from(self.from.bytes)
    }

    /// Whether the growth is within the bound.
    pub(crate) fn is_flat(&self) -> bool {
        self.bytes() <= i128::from(self.bound)
    }
}

/// The number of calls after which the warm-up is over.
pub(crate) fn warm_up_calls(calls: u64) -> u64 {
    calls / WARM_UP_DIVISOR
}

/// Judges the samples of a run of `calls` calls; `None` when fewer than
/// two samples fall after warm-up.
///
/// The bound is generous on purpose: the larger of 20 MiB and a quarter of
/// the first post-warm-up sample. Allocator noise (arenas trimmed or not,
/// fragmentation) moves RSS by a few MiB and does not grow with the number
/// of calls, while a leak does: leaking even one small scope (a few hundred
/// bytes) per call over the 800,000 post-warm-up calls of a default run is
/// well over 100 MiB. Leaked scopes are also caught exactly, by the count of
/// dependencies still alive; this check is the backstop for what no counter
/// sees (timer entries, tasks, tracing spans, buffers).
pub(crate) fn judge(samples: &[Sample], calls: u64) -> Option<Growth> {
    let warm_up = warm_up_calls(calls);
    let mut measured = samples.iter().filter(|sample| match sample.moment {
        Moment::Start => false,
        Moment::After(done) => done >= warm_up,
        Moment::Settled => true,
    });
    let from = *measured.next()?;
    let to = *measured.next_back()?;
    Some(Growth {
        from,
        to,
        bound: ALLOWED_GROWTH_BYTES.max(from.bytes / 4),
    })
}

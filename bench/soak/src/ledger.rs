//! Counters the request provider and its finalizers keep, per kind of call.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use toolwright::scope::Outcome;

use crate::calls::Kind;

/// One slot per kind, and a last one for builds made outside any soak call
/// (there must be none).
const SLOTS: usize = Kind::COUNT + 1;

/// The outcomes a finalizer can receive, in the order of the counters.
/// `Outcome` is `#[non_exhaustive]`: a new variant would count as "other".
pub(crate) const OUTCOMES: [&str; 5] = ["ok", "error", "panicked", "cancelled", "other"];

/// The position of `outcome` in [`OUTCOMES`].
pub(crate) fn outcome_index(outcome: Outcome) -> usize {
    match outcome {
        Outcome::Ok => 0,
        Outcome::Error => 1,
        Outcome::Panicked => 2,
        Outcome::Cancelled => 3,
        _ => 4,
    }
}

/// The position of a kind's counters; `None` is the unattributed slot.
fn slot(kind: Option<Kind>) -> usize {
    kind.map_or(Kind::COUNT, Kind::index)
}

/// Live counters, shared by the provider, its finalizers and the values it builds.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    builds: [AtomicU64; SLOTS],
    finalized: [[AtomicU64; OUTCOMES.len()]; SLOTS],
    alive: AtomicI64,
}

impl Ledger {
    /// The provider built a dependency for a call of `kind`.
    pub(crate) fn built(&self, kind: Option<Kind>) {
        self.builds[slot(kind)].fetch_add(1, Ordering::Relaxed);
        self.alive.fetch_add(1, Ordering::Relaxed);
    }

    /// A finalizer of a call of `kind` ran, with `outcome`.
    pub(crate) fn finalized(&self, kind: Option<Kind>, outcome: Outcome) {
        self.finalized[slot(kind)][outcome_index(outcome)].fetch_add(1, Ordering::Relaxed);
    }

    /// A dependency was dropped (its call's scope was freed).
    pub(crate) fn released(&self) {
        self.alive.fetch_sub(1, Ordering::Relaxed);
    }

    /// The counters now.
    pub(crate) fn snapshot(&self) -> Counts {
        Counts {
            builds: self.builds.each_ref().map(|n| n.load(Ordering::Relaxed)),
            finalized: self
                .finalized
                .each_ref()
                .map(|row| row.each_ref().map(|n| n.load(Ordering::Relaxed))),
            alive: self.alive.load(Ordering::Relaxed),
        }
    }
}

/// A snapshot of the [`Ledger`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    builds: [u64; SLOTS],
    finalized: [[u64; OUTCOMES.len()]; SLOTS],
    /// Dependencies built and not yet dropped.
    pub(crate) alive: i64,
}

impl Counts {
    /// Dependencies built for calls of `kind` (`None`: outside any call).
    pub(crate) fn builds(&self, kind: Option<Kind>) -> u64 {
        self.builds[slot(kind)]
    }

    /// Finalizer runs for calls of `kind`, per outcome (see [`OUTCOMES`]).
    pub(crate) fn finalized(&self, kind: Option<Kind>) -> [u64; OUTCOMES.len()] {
        self.finalized[slot(kind)]
    }

    /// Finalizer runs for calls of `kind`, whatever the outcome.
    pub(crate) fn finalized_total(&self, kind: Option<Kind>) -> u64 {
        self.finalized(kind).iter().sum()
    }

    /// Every dependency built.
    pub(crate) fn all_builds(&self) -> u64 {
        self.builds.iter().sum()
    }

    /// Every finalizer run.
    pub(crate) fn all_finalized(&self) -> u64 {
        self.finalized.iter().flatten().sum()
    }
}

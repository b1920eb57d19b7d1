//! A build-once cell: one REQUEST value of one call.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::{Context as TaskContext, Poll, Waker};

use super::container::Erased;

/// One REQUEST value of one call: built by its first asker, while any
/// other asker waits for that build. A build that fails, or is dropped
/// before it ends, leaves the cell empty for the next asker to try again.
///
/// A lock held only to read or change the state, never across an
/// `.await`: one call's tasks rarely contend for it, and it costs fewer
/// atomic operations than an async once-cell's semaphore.
#[derive(Default)]
pub(crate) struct Cell {
    state: Mutex<CellState>,
}

enum CellState {
    /// No value; `builds` builds of it have failed (or were dropped).
    Empty {
        builds: u32,
    },
    /// An asker is running build number `build` (from 1); `waiters` wait
    /// for it.
    Building {
        waiters: Vec<Waker>,
        build: u32,
    },
    Ready(Erased),
}

impl Default for CellState {
    fn default() -> Self {
        CellState::Empty { builds: 0 }
    }
}

/// What an asker of a [`Cell`] gets: the value, or the build to run.
pub(crate) enum Claim<R> {
    Built(R),
    /// The cell was empty; this asker runs the build with this number.
    Build(u32),
}

impl Cell {
    fn lock(&self) -> MutexGuard<'_, CellState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The value, read with `read`, once it is built; or, when the cell
    /// was empty, the number of the build the caller is now to run.
    pub(crate) fn poll_claim<R>(
        &self,
        cx: &mut TaskContext<'_>,
        read: impl FnOnce(&Erased) -> R,
    ) -> Poll<Claim<R>> {
        let mut state = self.lock();
        match &mut *state {
            CellState::Ready(value) => Poll::Ready(Claim::Built(read(value))),
            CellState::Empty { builds } => {
                let build = builds.wrapping_add(1);
                *state = CellState::Building {
                    waiters: Vec::new(),
                    build,
                };
                Poll::Ready(Claim::Build(build))
            }
            CellState::Building { waiters, .. } => {
                if !waiters.iter().any(|waiter| waiter.will_wake(cx.waker())) {
                    waiters.push(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// Ends a build: `state` in the cell, and every waiter woken.
    fn settle(&self, state: CellState) {
        let previous = std::mem::replace(&mut *self.lock(), state);
        if let CellState::Building { waiters, .. } = previous {
            waiters.into_iter().for_each(Waker::wake);
        }
    }

    /// Whether build number `build` is running.
    pub(crate) fn is_building(&self, build: u32) -> bool {
        matches!(&*self.lock(), CellState::Building { build: running, .. } if *running == build)
    }
}

/// The build of a [`Cell`]'s value in progress. Dropped unfinished (the
/// build failed, or its caller was dropped), it empties the cell again.
pub(crate) struct Building<'a> {
    pub(crate) cell: &'a Cell,
    /// Its number (see [`CellState`]).
    pub(crate) build: u32,
    pub(crate) done: bool,
}

impl Building<'_> {
    pub(crate) fn finish<R>(mut self, value: Erased, read: impl FnOnce(&Erased) -> R) -> R {
        let read = read(&value);
        self.cell.settle(CellState::Ready(value));
        self.done = true;
        read
    }
}

impl Drop for Building<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.cell.settle(CellState::Empty { builds: self.build });
        }
    }
}

//! Cycle detection: which REQUEST build waits for which, so that a build
//! asking, through others, for its own value fails instead of hanging.

use std::sync::{Mutex, PoisonError};

use super::container::Container;

/// Which build waits for which (slots, waiter first): a build waits for
/// each value it asks for, built by itself or by another asker.
#[derive(Default)]
pub(crate) struct Waits(Mutex<Vec<(usize, usize)>>);

/// One build's wait for a value (or for its build), entered in the scope's
/// [`Waits`] while it lasts.
pub(crate) struct Waiting<'a> {
    waits: &'a Waits,
    wait: (usize, usize),
}

impl<'a> Waiting<'a> {
    /// The build of `waiter` starts to wait for the value of `awaited`;
    /// refused, with the types of the cycle, when that value's build
    /// already waits, directly or through others, for `waiter`'s.
    pub(crate) fn start(
        waits: &'a Waits,
        container: &Container,
        waiter: usize,
        awaited: usize,
    ) -> Result<Self, Vec<&'static str>> {
        let registry = waits;
        let mut waits = waits.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(mut cycle) = path(&waits, awaited, waiter, &mut Vec::new()) {
            cycle.insert(0, waiter);
            return Err(cycle
                .into_iter()
                .map(|slot| container.type_name(slot))
                .collect());
        }
        waits.push((waiter, awaited));
        Ok(Waiting {
            waits: registry,
            wait: (waiter, awaited),
        })
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut waits = self.waits.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(at) = waits.iter().position(|wait| *wait == self.wait) {
            waits.swap_remove(at);
        }
    }
}

/// The slots from `from` to `to` along `waits`, both ends included, if
/// `to` can be reached (`seen`: the slots already searched). A handful of
/// waits at most: a depth-first search.
fn path(
    waits: &[(usize, usize)],
    from: usize,
    to: usize,
    seen: &mut Vec<usize>,
) -> Option<Vec<usize>> {
    if from == to {
        return Some(vec![to]);
    }
    if seen.contains(&from) {
        return None;
    }
    seen.push(from);
    waits
        .iter()
        .filter(|(waiter, _)| *waiter == from)
        .find_map(|&(_, awaited)| {
            let mut rest = path(waits, awaited, to, seen)?;
            rest.insert(0, from);
            Some(rest)
        })
}

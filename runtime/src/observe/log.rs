//! The execution log: the latest events in memory, paged by sequence number.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Serialize, Serializer};
use tokio::sync::Notify;

use super::{Event, Observer};

/// The latest events of an executor, in memory: a ring buffer that keeps
/// the newest `capacity` entries, each numbered 1, 2, 3… in the order its
/// observer received them.
///
/// An [`Observer`]: register a clone with
/// [`ExecutorBuilder::observe`](crate::executor::ExecutorBuilder::observe) and read
/// from another. Clones share one log (an `Arc` inside). Readers page
/// through it with [`since`](Self::since), from a sequence number to the
/// next, and are told when entries they had not read were overwritten.
///
/// ```
/// use serde_json::json;
/// use toolwright::observe::ExecutionLog;
/// use toolwright::{tool, Catalog, Container, Executor};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let log = ExecutionLog::new(1_000).unwrap();
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let executor = Executor::builder(catalog, Container::default())
///     .observe(log.clone())
///     .build()
///     .unwrap();
/// for a in 0..3 {
///     executor.invoke("add", json!({"a": a, "b": 1}), &()).await.unwrap();
/// }
/// log.wait_for(3).await;
///
/// let page = log.since(0, 2);
/// assert_eq!(page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
/// let page = log.since(page.next, 2);
/// assert_eq!(page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [3]);
/// assert_eq!((page.next, page.lost), (3, 0));
/// # }
/// ```
#[derive(Clone)]
pub struct ExecutionLog {
    shared: Arc<Shared>,
}

struct Shared {
    capacity: usize,
    ring: Mutex<Ring>,
    appended: Notify,
}

#[derive(Default)]
struct Ring {
    entries: VecDeque<LogEntry>,
    /// The sequence number of the newest entry (0: none yet).
    last: u64,
}

/// One entry of an [`ExecutionLog`].
///
/// Serializes as `{"seq": 1, "event": {...}}`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct LogEntry {
    /// Its number in the log: 1 for the first entry ever, then one more
    /// for each.
    pub seq: u64,
    /// What happened.
    #[serde(serialize_with = "shared_event")]
    pub event: Arc<Event>,
}

/// A page of an [`ExecutionLog`] ([`ExecutionLog::since`]).
///
/// ```
/// use toolwright::observe::Page;
///
/// fn report(page: &Page) -> String {
///     format!("{} entries, {} lost, continue after {}", page.entries.len(), page.lost, page.next)
/// }
/// # let _ = report;
/// ```
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Page {
    /// The entries after the cursor asked for, oldest first.
    pub entries: Vec<LogEntry>,
    /// The cursor for the next page: the last entry's number, or the
    /// cursor asked for when there was nothing new.
    pub next: u64,
    /// How many entries after the cursor were overwritten before they
    /// were read (the log wrapped around): a gap before `entries`.
    pub lost: u64,
}

/// An [`ExecutionLog`] cannot hold zero entries.
///
/// ```
/// use toolwright::observe::ExecutionLog;
///
/// let error = ExecutionLog::new(0).unwrap_err();
/// assert_eq!(error.to_string(), "an execution log needs a capacity of at least one entry");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("an execution log needs a capacity of at least one entry")]
#[non_exhaustive]
pub struct ZeroCapacity;

impl ExecutionLog {
    /// A log that keeps the newest `capacity` entries.
    ///
    /// ```
    /// use toolwright::observe::ExecutionLog;
    ///
    /// let log = ExecutionLog::new(10_000).unwrap();
    /// assert_eq!(log.capacity(), 10_000);
    /// assert_eq!(log.latest(), 0);
    /// ```
    pub fn new(capacity: usize) -> Result<Self, ZeroCapacity> {
        if capacity == 0 {
            return Err(ZeroCapacity);
        }
        Ok(ExecutionLog {
            shared: Arc::new(Shared {
                capacity,
                ring: Mutex::new(Ring::default()),
                appended: Notify::new(),
            }),
        })
    }

    /// How many entries it keeps.
    ///
    /// ```
    /// assert_eq!(toolwright::observe::ExecutionLog::new(5).unwrap().capacity(), 5);
    /// ```
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// The newest entry's number: how many entries were ever appended.
    ///
    /// ```
    /// use toolwright::observe::ExecutionLog;
    ///
    /// let log = ExecutionLog::new(5).unwrap();
    /// assert_eq!(log.latest(), 0);
    /// ```
    pub fn latest(&self) -> u64 {
        self.ring().last
    }

    /// At most `limit` entries after number `after`, oldest first (`0`:
    /// from the oldest kept), with the cursor for the next page and how
    /// many entries after `after` were lost to wrap-around.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::observe::ExecutionLog;
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let log = ExecutionLog::new(2).unwrap();
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .observe(log.clone())
    ///     .build()
    ///     .unwrap();
    /// for a in 0..5 {
    ///     executor.invoke("add", json!({"a": a, "b": 1}), &()).await.unwrap();
    /// }
    /// log.wait_for(5).await;
    ///
    /// // Entries 1 to 3 were overwritten; 4 and 5 are kept.
    /// let page = log.since(0, 100);
    /// assert_eq!(page.lost, 3);
    /// assert_eq!(page.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [4, 5]);
    /// assert_eq!(page.next, 5);
    /// # }
    /// ```
    pub fn since(&self, after: u64, limit: usize) -> Page {
        let ring = self.ring();
        let kept = ring.entries.len() as u64;
        // The oldest entry kept (when none is, the one to come).
        let first = ring.last + 1 - kept;
        let lost = first.saturating_sub(after + 1);
        let skip = (after + 1).saturating_sub(first);
        let entries: Vec<LogEntry> = ring
            .entries
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
            .take(limit)
            .cloned()
            .collect();
        let next = match entries.last() {
            Some(entry) => entry.seq,
            None => after.max(first - 1),
        };
        Page {
            entries,
            next,
            lost,
        }
    }

    /// Waits until the log holds entries after number `after`, then
    /// returns up to `limit` of them, as [`since`](Self::since): a long
    /// poll for a live view.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::observe::{Event, ExecutionLog};
    /// use toolwright::{tool, Catalog, Container, Executor};
    ///
    /// /// Add two numbers.
    /// #[tool(key = "math.add", effect = read, authorize = public)]
    /// async fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let log = ExecutionLog::new(100).unwrap();
    /// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
    /// let executor = Executor::builder(catalog, Container::default())
    ///     .observe(log.clone())
    ///     .build()
    ///     .unwrap();
    /// executor.invoke("add", json!({"a": 1, "b": 1}), &()).await.unwrap();
    /// let page = log.next_page(0, 10).await;
    /// assert!(matches!(&*page.entries[0].event, Event::Call(_)));
    /// # }
    /// ```
    pub async fn next_page(&self, after: u64, limit: usize) -> Page {
        loop {
            // Made before the check, so that no append in between is missed.
            let appended = self.shared.appended.notified();
            if self.latest() > after {
                return self.since(after, limit);
            }
            appended.await;
        }
    }

    /// Waits until the log has ever held `count` entries, and returns
    /// the first `count` still kept (entries `1..=count`).
    ///
    /// For tests and examples, where a call's event reaches the log's
    /// thread a moment after the call returns.
    ///
    /// ```
    /// use toolwright::observe::ExecutionLog;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let log = ExecutionLog::new(10).unwrap();
    /// assert!(log.wait_for(0).await.is_empty());
    /// # }
    /// ```
    pub async fn wait_for(&self, count: u64) -> Vec<LogEntry> {
        while self.latest() < count {
            let appended = self.shared.appended.notified();
            if self.latest() >= count {
                break;
            }
            appended.await;
        }
        let limit = usize::try_from(count).unwrap_or(usize::MAX);
        self.since(0, limit).entries
    }

    fn ring(&self) -> MutexGuard<'_, Ring> {
        // Nothing panics while holding it; a poisoned ring is still whole.
        self.shared
            .ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl ExecutionLog {
    /// Appends `event`, shared with the other observers: the executor's
    /// dispatcher hands it over this way rather than through `on_event`,
    /// which would copy it.
    pub(crate) fn append(&self, event: Arc<Event>) {
        let evicted = {
            let mut ring = self.ring();
            let evicted = match ring.entries.len() == self.shared.capacity {
                true => ring.entries.pop_front(),
                false => None,
            };
            ring.last += 1;
            let seq = ring.last;
            ring.entries.push_back(LogEntry { seq, event });
            evicted
        };
        // Dropped outside the lock, which readers wait for.
        drop(evicted);
        self.shared.appended.notify_waiters();
    }
}

impl Observer for ExecutionLog {
    fn on_event(&self, event: &Event) {
        self.append(Arc::new(event.clone()));
    }
}

impl std::fmt::Debug for ExecutionLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutionLog")
            .field("capacity", &self.shared.capacity)
            .field("latest", &self.latest())
            .finish()
    }
}

fn shared_event<S: Serializer>(event: &Arc<Event>, s: S) -> Result<S::Ok, S::Error> {
    event.serialize(s)
}

//! Observers and how events reach them: one bounded queue and one thread
//! per observer, so that a slow or panicking observer never holds up a
//! call, nor the other observers.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};

use super::Event;

/// Something told about every [`Event`] of an executor: register it with
/// [`ExecutorBuilder::observe`](crate::ExecutorBuilder::observe).
///
/// Each observer has its own thread, which calls `on_event` with the
/// events in the order they happened, and its own bounded queue. A call
/// never waits for an observer: when the queue is full the event is
/// dropped for that observer and counted
/// ([`ObserverStats::dropped`]). An observer may block (write a file,
/// send a request); it only delays its own events. One that panics is
/// counted ([`ObserverStats::panicked`]) and keeps receiving later events:
/// a panic on one odd event should not blind the operator to the rest.
///
/// No tokio runtime is needed: the threads are plain OS threads, started
/// when the executor is built and ended once every handle to it is gone
/// and its queue is drained. Hand async work on to a channel of your own.
///
/// Closures taking `&Event` are observers:
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use serde_json::json;
/// use toolwright::observe::Event;
/// use toolwright::{tool, Catalog, Container, Executor};
///
/// /// Add two numbers.
/// #[tool(key = "math.add", effect = read, authorize = public)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (tx, rx) = std::sync::mpsc::channel();
/// let tx = Mutex::new(tx);
/// let catalog = Catalog::builder().register::<AddArgs>().build().unwrap();
/// let executor = Executor::builder(catalog, Container::default())
///     .observe(move |event: &Event| {
///         if let Event::Call(call) = event {
///             _ = tx.lock().unwrap().send(call.outcome);
///         }
///     })
///     .build()
///     .unwrap();
/// executor.invoke("add", json!({"a": 1, "b": 2}), &()).await.unwrap();
/// assert_eq!(rx.recv().unwrap().as_str(), "ok");
/// # }
/// ```
pub trait Observer: Send + Sync + 'static {
    /// Called, on the observer's own thread, with each event in turn.
    fn on_event(&self, event: &Event);
}

impl<F: Fn(&Event) + Send + Sync + 'static> Observer for F {
    fn on_event(&self, event: &Event) {
        self(event)
    }
}

/// How one observer is keeping up: see
/// [`Executor::observer_stats`](crate::Executor::observer_stats).
///
/// ```
/// use toolwright::observe::ObserverStats;
///
/// fn healthy(stats: &ObserverStats) -> bool {
///     stats.dropped == 0 && stats.panicked == 0
/// }
/// # let _ = healthy;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObserverStats {
    /// The observer's type name.
    pub name: &'static str,
    /// Events handed to the observer (panicked ones included).
    pub delivered: u64,
    /// Events dropped because its queue was full.
    pub dropped: u64,
    /// Events on which it panicked.
    pub panicked: u64,
}

/// The queue length an observer gets unless the builder says otherwise
/// ([`ExecutorBuilder::observer_queue`](crate::ExecutorBuilder::observer_queue)).
///
/// ```
/// assert_eq!(toolwright::observe::DEFAULT_OBSERVER_QUEUE, 1024);
/// ```
pub const DEFAULT_OBSERVER_QUEUE: usize = 1024;

/// An observer as the builder holds it, until the executor starts it.
pub(crate) struct Pending {
    pub(crate) name: &'static str,
    pub(crate) observer: Box<dyn Observer>,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Pending {
    pub(crate) fn new<O: Observer>(observer: O) -> Self {
        Pending {
            name: std::any::type_name::<O>(),
            observer: Box::new(observer),
        }
    }
}

/// An executor's running observers: their queues and counters, and the
/// next call's number.
pub(crate) struct Observers {
    slots: Vec<Slot>,
    next_call: AtomicU64,
}

struct Slot {
    name: &'static str,
    queue: SyncSender<Arc<Event>>,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    delivered: AtomicU64,
    dropped: AtomicU64,
    panicked: AtomicU64,
}

impl Observers {
    /// Starts a thread for each observer, with a queue of `queue` events.
    pub(crate) fn start(pending: Vec<Pending>, queue: usize) -> std::io::Result<Self> {
        let mut slots = Vec::with_capacity(pending.len());
        for Pending { name, observer } in pending {
            let (sender, receiver) = mpsc::sync_channel(queue.max(1));
            let counts = Arc::new(Counts::default());
            let counted = counts.clone();
            std::thread::Builder::new()
                .name("toolwright-observer".to_owned())
                .spawn(move || drain(&*observer, &receiver, &counted))?;
            slots.push(Slot {
                name,
                queue: sender,
                counts,
            });
        }
        Ok(Observers {
            slots,
            next_call: AtomicU64::new(1),
        })
    }

    /// The number of the call that starts now.
    pub(crate) fn next_call(&self) -> u64 {
        self.next_call.fetch_add(1, Ordering::Relaxed)
    }

    /// Queues `event` for every observer, dropping it for those whose
    /// queue is full. Never waits.
    pub(crate) fn emit(&self, event: Event) {
        let event = Arc::new(event);
        for slot in &self.slots {
            match slot.queue.try_send(event.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    slot.counts.dropped.fetch_add(1, Ordering::Relaxed);
                }
                // The thread is gone only if it could not go on; nothing to tell.
                Err(TrySendError::Disconnected(_)) => {}
            }
        }
    }

    pub(crate) fn stats(&self) -> Vec<ObserverStats> {
        self.slots
            .iter()
            .map(|slot| ObserverStats {
                name: slot.name,
                delivered: slot.counts.delivered.load(Ordering::Relaxed),
                dropped: slot.counts.dropped.load(Ordering::Relaxed),
                panicked: slot.counts.panicked.load(Ordering::Relaxed),
            })
            .collect()
    }
}

/// An observer's thread: each event in turn, until the executor is gone.
fn drain(observer: &dyn Observer, events: &Receiver<Arc<Event>>, counts: &Counts) {
    for event in events {
        let told = std::panic::catch_unwind(AssertUnwindSafe(|| observer.on_event(&event)));
        counts.delivered.fetch_add(1, Ordering::Relaxed);
        if told.is_err() {
            counts.panicked.fetch_add(1, Ordering::Relaxed);
        }
    }
}

//! Observers and how events reach them: one dispatcher thread per
//! executor, behind a bounded channel, builds each call's event; each
//! observer is handed its events in batches on tokio's blocking pool, one
//! batch at a time, behind its own bounded queue. A slow or panicking
//! observer never holds up a call, nor the other observers.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::runtime::Handle;

use super::recording::CallRecord;
use super::{Event, ExecutionLog};

/// Something told about every [`Event`] of an executor: register it with
/// [`ExecutorBuilder::observe`](crate::executor::ExecutorBuilder::observe).
///
/// `on_event` is called with the events in the order they happened, one
/// at a time, on a thread of the blocking pool of the tokio runtime the
/// executor was built in (no thread is kept per observer). Each observer
/// has its own bounded queue. A call never waits for an observer: when
/// the queue is full the event is dropped for that observer and counted
/// ([`ObserverStats::dropped`]). An observer may block (write a file,
/// send a request); it only delays its own events, though a runtime that
/// shuts down waits for the one in hand. One that panics is counted
/// ([`ObserverStats::panicked`]) and keeps receiving later events: a
/// panic on one odd event should not blind the operator to the rest.
///
/// An executor built outside a tokio runtime tells its observers in turn
/// on its dispatcher thread, so there a slow observer delays the others.
/// Hand async work on to a channel of your own.
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
    /// Called with each event in turn, never from the call's own task.
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
/// ([`ExecutorBuilder::observer_queue`](crate::executor::ExecutorBuilder::observer_queue)).
///
/// ```
/// assert_eq!(toolwright::observe::DEFAULT_OBSERVER_QUEUE, 1024);
/// ```
pub const DEFAULT_OBSERVER_QUEUE: usize = 1024;

/// An observer as the builder holds it, until the executor starts it.
pub(crate) struct Pending {
    pub(crate) name: &'static str,
    pub(crate) observer: Told,
}

/// How an observer is told of events.
pub(crate) enum Told {
    /// The execution log keeps the event the others are shown, not a copy;
    /// appending never blocks, so the dispatcher does it itself.
    Log(ExecutionLog),
    Other(Box<dyn Observer>),
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Pending {
    pub(crate) fn new<O: Observer>(observer: O) -> Self {
        // A clone of a log is the same log.
        let observer = match (&observer as &dyn Any).downcast_ref::<ExecutionLog>() {
            Some(log) => Told::Log(log.clone()),
            None => Told::Other(Box::new(observer)),
        };
        Pending {
            name: std::any::type_name::<O>(),
            observer,
        }
    }
}

/// An executor's running observers: the dispatcher's channel, and each
/// observer's queue and counters. Dropped with the executor, it closes the
/// channel: the dispatcher hands on what is queued, then ends.
pub(crate) struct Observers {
    dispatch: SyncSender<Raw>,
    slots: Arc<[Arc<Slot>]>,
}

/// What reaches the dispatcher. Other events are boxed: they are rare,
/// and the channel's items are as large as the largest.
enum Raw {
    Call(CallRecord),
    Event(Box<Event>),
}

/// How long the dispatcher waits, after each batch, before it looks for
/// more. A channel wakes a receiver blocked on it for every item (a system
/// call per call); while calls keep coming, the dispatcher is asleep here
/// instead, not blocked on the channel, so no call pays for waking it.
const LINGER: Duration = Duration::from_millis(1);

struct Slot {
    name: &'static str,
    observer: Told,
    queue: Mutex<Queue>,
    capacity: usize,
    counts: Counts,
}

// Not a tokio/crossbeam channel: no receiver parks here, and `telling` needs this lock anyway.
#[derive(Default)]
struct Queue {
    events: VecDeque<Arc<Event>>,
    /// A job on the blocking pool is telling the observer: it takes what
    /// is queued until nothing is left.
    telling: bool,
}

#[derive(Default)]
struct Counts {
    delivered: AtomicU64,
    dropped: AtomicU64,
    panicked: AtomicU64,
}

impl Observers {
    /// Starts the dispatcher; observers other than the execution log run on
    /// the blocking pool of the runtime this is called in, if any. Each
    /// queue holds `queue` items.
    pub(crate) fn start(pending: Vec<Pending>, queue: usize) -> std::io::Result<Self> {
        let capacity = queue.max(1);
        let slots: Arc<[Arc<Slot>]> = pending
            .into_iter()
            .map(|Pending { name, observer }| {
                Arc::new(Slot {
                    name,
                    observer,
                    queue: Mutex::default(),
                    capacity,
                    counts: Counts::default(),
                })
            })
            .collect();
        let (dispatch, raw) = std::sync::mpsc::sync_channel(capacity);
        let (fanned, pool) = (slots.clone(), Handle::try_current().ok());
        std::thread::Builder::new()
            .name("toolwright-observers".to_owned())
            .spawn(move || dispatch_all(&raw, &fanned, pool.as_ref()))?;
        Ok(Observers { dispatch, slots })
    }

    /// Queues `event` for every observer, dropping it for those whose
    /// queue is full. Never waits for an observer.
    pub(crate) fn emit(&self, event: Event) {
        self.post(Raw::Event(Box::new(event)));
    }

    /// Queues a call's findings, which the dispatcher turns into its event.
    pub(crate) fn emit_call(&self, call: CallRecord) {
        self.post(Raw::Call(call));
    }

    fn post(&self, raw: Raw) {
        // Disconnected only if the dispatcher died, which it does not.
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            self.dispatch.try_send(raw)
        {
            for slot in &*self.slots {
                slot.counts.dropped.fetch_add(1, Ordering::Relaxed);
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

/// The dispatcher's thread: each call's event built, then handed to every
/// observer, until the executor is gone and the channel drained.
fn dispatch_all(raw: &Receiver<Raw>, slots: &[Arc<Slot>], pool: Option<&Handle>) {
    while let Ok(first) = raw.recv() {
        for raw in std::iter::once(first).chain(raw.try_iter()) {
            let built = std::panic::catch_unwind(AssertUnwindSafe(|| match raw {
                Raw::Event(event) => *event,
                Raw::Call(call) => Event::Call(call.event()),
            }));
            // Building an event does not panic; were it to, the event is
            // lost for everyone, and the dispatcher goes on.
            let Ok(event) = built.map(Arc::new) else {
                for slot in slots {
                    slot.counts.dropped.fetch_add(1, Ordering::Relaxed);
                }
                continue;
            };
            for slot in slots {
                slot.hand(&event, pool);
            }
        }
        std::thread::sleep(LINGER);
    }
}

impl Slot {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives `event` to the observer: the log appends it at once; others
    /// have it queued for a job on `pool` (started unless one is at work),
    /// or, with no runtime, are told here.
    fn hand(self: &Arc<Self>, event: &Arc<Event>, pool: Option<&Handle>) {
        let (Told::Other(_), Some(pool)) = (&self.observer, pool) else {
            return self.tell(event);
        };
        let mut queue = self.lock();
        if queue.events.len() >= self.capacity {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        queue.events.push_back(event.clone());
        if !std::mem::replace(&mut queue.telling, true) {
            drop(queue);
            let job = Job {
                slot: self.clone(),
                ran: false,
            };
            // Spawning on a runtime that is gone drops the job unrun.
            drop(pool.spawn_blocking(move || job.run()));
        }
    }

    /// Tells the observer of one event, catching its panic.
    fn tell(&self, event: &Arc<Event>) {
        let told = std::panic::catch_unwind(AssertUnwindSafe(|| match &self.observer {
            Told::Log(log) => log.append(event.clone()),
            Told::Other(observer) => observer.on_event(event),
        }));
        self.counts.delivered.fetch_add(1, Ordering::Relaxed);
        if told.is_err() {
            self.counts.panicked.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Tells an observer what its queue holds, on the blocking pool, until
/// the queue is empty.
struct Job {
    slot: Arc<Slot>,
    ran: bool,
}

impl Job {
    fn run(mut self) {
        loop {
            let batch = {
                let mut queue = self.slot.lock();
                if queue.events.is_empty() {
                    queue.telling = false;
                    break;
                }
                std::mem::take(&mut queue.events)
            };
            batch.iter().for_each(|event| self.slot.tell(event));
        }
        self.ran = true;
    }
}

impl Drop for Job {
    /// A job its runtime never ran (it shut down): what it would have told
    /// is dropped and counted, and the next event tries again.
    fn drop(&mut self) {
        if !self.ran {
            let mut queue = self.slot.lock();
            let lost = std::mem::take(&mut queue.events).len() as u64;
            queue.telling = false;
            self.slot.counts.dropped.fetch_add(lost, Ordering::Relaxed);
        }
    }
}

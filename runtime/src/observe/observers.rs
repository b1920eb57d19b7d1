//! Observers and how events reach them: a dispatcher thread that builds
//! each call's event, then one bounded queue and one thread per observer,
//! so that a slow or panicking observer never holds up a call, nor the
//! other observers.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::recording::CallRecord;
use super::{Event, ExecutionLog};

/// Something told about every [`Event`] of an executor: register it with
/// [`ExecutorBuilder::observe`](crate::ExecutorBuilder::observe).
///
/// Each observer has its own thread, which calls `on_event` with the
/// events in the order they happened, and its own bounded queue. While
/// calls keep coming the thread collects their events every millisecond
/// or so, so that no call pays for waking it. A call
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
    pub(crate) observer: Receiver,
}

/// How an observer receives events.
pub(crate) enum Receiver {
    /// The execution log keeps the event the others are shown, not a copy.
    Log(ExecutionLog),
    Other(Box<dyn Observer>),
}

impl Receiver {
    fn receive(&self, event: &Arc<Event>) {
        match self {
            Receiver::Log(log) => log.append(event.clone()),
            Receiver::Other(observer) => observer.on_event(event),
        }
    }
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
            Some(log) => Receiver::Log(log.clone()),
            None => Receiver::Other(Box::new(observer)),
        };
        Pending {
            name: std::any::type_name::<O>(),
            observer,
        }
    }
}

/// An executor's running observers: the dispatcher's queue, and each
/// observer's queue and counters.
///
/// A call hands what it found to the dispatcher, a thread that builds the
/// event (digest, redaction) and queues it for each observer: a call pays
/// for neither.
pub(crate) struct Observers {
    dispatch: Arc<Mailbox<Raw>>,
    slots: Arc<[Slot]>,
}

struct Slot {
    name: &'static str,
    mailbox: Mailbox<Arc<Event>>,
    counts: Counts,
}

#[derive(Default)]
struct Counts {
    delivered: AtomicU64,
    dropped: AtomicU64,
    panicked: AtomicU64,
}

/// What reaches the dispatcher. Other events are boxed: they are rare,
/// and the queue's items are as large as the largest.
enum Raw {
    Call(CallRecord),
    Event(Box<Event>),
}

/// How long a queue's thread waits for more, once its queue is empty,
/// before it goes to sleep until the next item: while calls keep coming,
/// it collects them every `LINGER` and no call pays for waking it.
const LINGER: Duration = Duration::from_millis(1);

/// A bounded queue with one thread taking from it.
///
/// A channel would wake the thread for every item (a system call per call,
/// microseconds on a busy machine). Here a sender wakes it only when it is
/// asleep, or when the queue is half full while it lingers: under load,
/// the thread takes items in batches.
///
/// The taker only reads the items, and hands each batch back for the
/// senders to drop, a few per item they post: memory is then freed by
/// the thread that allocated it. Freed on another thread, it would make
/// the sender's allocator take a lock on every call (glibc's arenas).
/// A batch handed back waits for the next post (a queue's length at most).
struct Mailbox<T> {
    inbox: Mutex<Inbox<T>>,
    wake: Condvar,
    capacity: usize,
}

struct Inbox<T> {
    items: VecDeque<T>,
    /// Items the taker is done with, for the senders to drop.
    spent: VecDeque<T>,
    waiting: Waiting,
    /// No more items will come: take what is queued, then end.
    closed: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// At work: it looks for more when it is done.
    No,
    /// Waiting at most [`LINGER`] for more.
    Lingering,
    /// Waiting with no deadline: only a new item wakes it.
    Asleep,
}

/// How many spent items a sender drops per item it posts: more than one,
/// so that they never pile up.
const DROPPED_PER_POST: usize = 2;

impl<T> Mailbox<T> {
    fn new(capacity: usize) -> Self {
        Mailbox {
            inbox: Mutex::new(Inbox {
                items: VecDeque::new(),
                spent: VecDeque::new(),
                waiting: Waiting::No,
                closed: false,
            }),
            wake: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inbox<T>> {
        self.inbox.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues `item`, unless the queue is full (`false`: it is dropped).
    /// Never waits for the taker. Drops a few items the taker is done with.
    fn post(&self, item: T) -> bool {
        let mut inbox = self.lock();
        // Dropped where they lie (moving them out would copy each).
        let keep = inbox.spent.len().saturating_sub(DROPPED_PER_POST);
        inbox.spent.truncate(keep);
        if inbox.items.len() >= self.capacity {
            drop(inbox);
            drop(item);
            return false;
        }
        inbox.items.push_back(item);
        let wake = match inbox.waiting {
            Waiting::Asleep => true,
            Waiting::Lingering => inbox.items.len() >= self.capacity.div_ceil(2),
            Waiting::No => false,
        };
        if wake {
            inbox.waiting = Waiting::No;
            drop(inbox);
            self.wake.notify_one();
        }
        true
    }

    /// The items queued, in exchange for `done`, the last batch taken
    /// (for the senders to drop); waits for some first. `None` once the
    /// mailbox is closed and empty.
    fn take(&self, mut done: VecDeque<T>) -> Option<VecDeque<T>> {
        let mut inbox = self.lock();
        if !inbox.spent.is_empty() {
            // The senders have not dropped the last batch handed back yet
            // (calls slowed down): this one is dropped here, unlocked,
            // rather than pile up.
            drop(inbox);
            done.clear();
            inbox = self.lock();
        }
        let mut lingered = false;
        loop {
            if !inbox.items.is_empty() {
                inbox.waiting = Waiting::No;
                if inbox.spent.is_empty() {
                    // Handed back; the emptied buffer holds the next items.
                    std::mem::swap(&mut inbox.spent, &mut done);
                }
                return Some(std::mem::replace(&mut inbox.items, done));
            }
            if inbox.closed {
                return None;
            }
            if lingered {
                inbox.waiting = Waiting::Asleep;
                inbox = self
                    .wake
                    .wait(inbox)
                    .unwrap_or_else(PoisonError::into_inner);
            } else {
                inbox.waiting = Waiting::Lingering;
                inbox = self
                    .wake
                    .wait_timeout(inbox, LINGER)
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
                lingered = true;
            }
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.wake.notify_one();
    }

    /// Calls `each` with every item posted, in order, until the mailbox is
    /// closed and empty.
    fn serve(&self, mut each: impl FnMut(&T)) {
        let mut done = VecDeque::new();
        while let Some(items) = self.take(done) {
            items.iter().for_each(&mut each);
            done = items;
        }
    }
}

impl Observers {
    /// Starts the dispatcher and a thread for each observer, each with a
    /// queue of `queue` items.
    pub(crate) fn start(pending: Vec<Pending>, queue: usize) -> std::io::Result<Self> {
        let mut observers = Vec::with_capacity(pending.len());
        let slots: Arc<[Slot]> = pending
            .into_iter()
            .map(|Pending { name, observer }| {
                observers.push(observer);
                Slot {
                    name,
                    mailbox: Mailbox::new(queue),
                    counts: Counts::default(),
                }
            })
            .collect();
        for (index, observer) in observers.into_iter().enumerate() {
            let slots = slots.clone();
            spawn(move || deliver(&observer, &slots[index]))?;
        }
        let dispatch = Arc::new(Mailbox::new(queue));
        let (taking, fanned) = (dispatch.clone(), slots.clone());
        spawn(move || dispatch_all(&taking, &fanned))?;
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
        if !self.dispatch.post(raw) {
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

impl Drop for Observers {
    /// The dispatcher delivers what is queued, then closes every
    /// observer's queue, and each thread ends once its queue is empty.
    fn drop(&mut self) {
        self.dispatch.close();
    }
}

fn spawn(work: impl FnOnce() + Send + 'static) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("toolwright-observer".to_owned())
        .spawn(work)
        .map(drop)
}

/// The dispatcher's thread: each call's event built, then queued for every
/// observer.
fn dispatch_all(dispatch: &Mailbox<Raw>, slots: &[Slot]) {
    dispatch.serve(|raw| {
        // Built from what was posted, which goes back to be dropped where
        // it was made.
        let built = std::panic::catch_unwind(AssertUnwindSafe(|| match raw {
            Raw::Event(event) => Event::clone(event),
            Raw::Call(call) => Event::Call(call.event()),
        }));
        // Building an event does not panic; were it to, the event is lost
        // for everyone, and the dispatcher goes on.
        let Ok(event) = built.map(Arc::new) else {
            for slot in slots {
                slot.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
            return;
        };
        for slot in slots {
            if !slot.mailbox.post(event.clone()) {
                slot.counts.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    for slot in slots {
        slot.mailbox.close();
    }
}

/// An observer's thread: each event in turn, until the executor is gone.
fn deliver(observer: &Receiver, slot: &Slot) {
    slot.mailbox.serve(|event| {
        let told = std::panic::catch_unwind(AssertUnwindSafe(|| observer.receive(event)));
        slot.counts.delivered.fetch_add(1, Ordering::Relaxed);
        if told.is_err() {
            slot.counts.panicked.fetch_add(1, Ordering::Relaxed);
        }
    });
}

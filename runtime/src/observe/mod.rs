#![doc = include_str!("../../docs/observe.md")]

mod event;
mod log;
mod observers;
mod recording;
mod redact;

pub use event::{ApprovalUse, CallEvent, ErrorText, Event, OutcomeClass, PolicyRuling};
pub use log::{ExecutionLog, LogEntry, Page, ZeroCapacity};
pub use observers::{DEFAULT_OBSERVER_QUEUE, Observer, ObserverStats};
pub use redact::REDACTED;

pub(crate) use observers::{Observers, Pending};
pub(crate) use recording::{CallTrail, Recording, refused};
pub(crate) use redact::redact;

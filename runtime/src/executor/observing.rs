//! What an executor tells its observers and its audit trail: each call's
//! recording, the calls refused before they start, the registry's changes
//! and the approvals' decisions.

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use crate::approval::{Approval, Approvals, DecisionTap, DecisionTrail};
use crate::audit::{DecisionAudit, Trail};
use crate::error::CallError;
use crate::observe::{self, CallTrail, Event, ObserverStats, Observers, Recording};
use crate::pipeline::Watch;
use crate::registry::{Change, Registry, Tap};

#[cfg(doc)]
use super::ExecutorBuilder;
use super::{Executor, Found};

/// An executor's running observers, and the taps through which its
/// registry and approvals reach them (held here: they hold them weakly).
pub(super) struct Observing {
    observers: Arc<Observers>,
    _registry: Arc<Tap>,
    _decisions: Option<Arc<DecisionTap>>,
}

impl Executor {
    /// How each of this executor's observers is keeping up, in the order
    /// they were registered ([`ExecutorBuilder::observe`]): events
    /// delivered, dropped because its queue was full, and panicked on.
    ///
    /// ```
    /// use toolwright::observe::ExecutionLog;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// let executor = Executor::builder(Catalog::builder().build().unwrap(), Container::default())
    ///     .observe(ExecutionLog::new(100).unwrap())
    ///     .build()
    ///     .unwrap();
    /// let stats = executor.observer_stats();
    /// assert_eq!(stats.len(), 1);
    /// assert!(stats[0].name.ends_with("ExecutionLog"));
    /// ```
    pub fn observer_stats(&self) -> Vec<ObserverStats> {
        self.observers().map(Observers::stats).unwrap_or_default()
    }

    /// Tells the observers of a call that ended before it started, with
    /// `error`: of the tool `found`, or of no tool by the name `name`.
    #[cold]
    #[inline(never)]
    pub(crate) fn refused<C: Any + Send + Sync>(
        &self,
        found: Option<&Found>,
        name: &str,
        ctx: &C,
        error: &CallError,
    ) {
        if let Some(observers) = self.observers() {
            let (key, name) = match (found, error) {
                (Some(found), _) => {
                    let served = found.tool().served();
                    (Some(served.key.clone()), &*served.name)
                }
                (None, CallError::Disabled { key, .. }) => (Some(key.clone()), name),
                (None, _) => (None, name),
            };
            let id = self.inner.services.calls.next();
            observe::refused(observers, id, key, name, self.actor(ctx), error);
        }
    }

    /// The recording of a call of the tool found, when the executor has
    /// observers.
    pub(super) fn recording<'a, C: Any + Send + Sync>(
        &'a self,
        found: &'a Found,
        ctx: &'a C,
    ) -> Option<Box<Recording<'a>>> {
        let observers = self.observers();
        if observers.is_none()
            && (self.inner.audit.is_none() || !found.tool().served().effect.requires_approval())
        {
            return None;
        }
        self.record(observers, found, ctx)
    }

    #[cold]
    #[inline(never)]
    fn record<'a, C: Any + Send + Sync>(
        &'a self,
        observers: Option<&'a Observers>,
        found: &'a Found,
        ctx: &'a C,
    ) -> Option<Box<Recording<'a>>> {
        let tool = found.tool();
        let served = tool.served();
        let audit = match &self.inner.audit {
            Some(trail) if served.effect.requires_approval() => {
                Some((trail as &dyn CallTrail, served.effect))
            }
            _ => None,
        };
        Some(Box::new(Recording::start(
            observers,
            audit,
            self.inner.services.calls.next(),
            &served.key,
            &served.name,
            self.actor(ctx),
            tool,
        )))
    }

    fn observers(&self) -> Option<&Observers> {
        self.inner.observing.as_ref().map(|o| &*o.observers)
    }
}

/// A recording as the steps see it.
pub(super) fn watch<'a>(recording: &'a Option<Box<Recording<'_>>>) -> Option<&'a dyn Watch> {
    recording
        .as_deref()
        .map(|recording| recording as &dyn Watch)
}

/// The observers running, told of the registry's changes and the
/// approvals' decisions.
pub(super) fn observing(
    observers: Arc<Observers>,
    registry: &Registry,
    approvals: Option<&Approvals>,
) -> Observing {
    let events = observers.clone();
    let changes: Arc<Tap> =
        Arc::new(move |change: &Change| events.emit(Event::Registry(change.clone())));
    registry.tap(&changes);
    let decisions = approvals.map(|approvals| {
        let events = observers.clone();
        let decisions: Arc<DecisionTap> =
            Arc::new(move |approval: &Approval| events.emit(Event::Approval(approval.clone())));
        approvals.tap(&decisions);
        decisions
    });
    Observing {
        observers,
        _registry: changes,
        _decisions: decisions,
    }
}

/// Records the decisions of `approvals` in `trail`, their arguments
/// masked by the schema of their tool in `registry`.
pub(super) fn audit_decisions(
    trail: &Trail,
    registry: &Registry,
    approvals: &Approvals,
) -> Arc<DecisionAudit> {
    let registry = registry.clone();
    let audit = Arc::new(DecisionAudit {
        trail: trail.0.clone(),
        mask: Box::new(move |key, name, arguments| {
            let snapshot = registry.current();
            let catalog = &snapshot.catalog;
            match catalog.index_of(name).map(|index| catalog.entry(index)) {
                Some(tool) if tool.served().key == key => {
                    observe::redact(tool.input_schema(), arguments)
                }
                // A tool no longer served: nothing says what is secret.
                _ => Value::String(observe::REDACTED.to_owned()),
            }
        }),
    });
    let decisions: Arc<dyn DecisionTrail> = audit.clone();
    approvals.audit(&decisions);
    audit
}

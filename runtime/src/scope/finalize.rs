//! Finalizers: what a scope runs when its call ends, newest first, each
//! exactly once, and what a failing one does to the call.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use super::Outcome;
use crate::error::BoxError;
use crate::util::BoxFuture;
use crate::util::panic::CatchUnwind;

/// A finalizer as a scope keeps it: what to run, and which provider
/// registered it (for the error that names it).
pub(crate) struct Finalizer {
    pub(crate) run: Box<dyn FnOnce(Outcome) -> BoxFuture<'static, Result<(), BoxError>> + Send>,
    pub(crate) provider: Option<&'static str>,
}

/// What a finalizer's future may end with: nothing, or a `Result` whose
/// error fails a call that had succeeded (a commit that did not happen).
///
/// ```
/// use toolwright::{scope::{Outcome, Scope, ResolveError}};
///
/// struct Tx;
///
/// // Both kinds of finalizer, side by side.
/// async fn provide(scope: Scope) -> Result<Tx, ResolveError> {
///     scope.on_close(|outcome| async move { println!("closed: {outcome:?}") });
///     scope.on_close(|outcome| async move {
///         if outcome.is_ok() {
///             return Err(std::io::Error::other("the commit failed"));
///         }
///         Ok(())
///     });
///     Ok(Tx)
/// }
/// # let _ = provide;
/// ```
#[diagnostic::on_unimplemented(
    message = "a finalizer cannot end with `{Self}`",
    note = "a finalizer's future ends with `()` or with `Result<(), E>` where `E` converts into `Box<dyn Error + Send + Sync>`"
)]
pub trait FinalizerOutput: Send + 'static {
    /// The finalizer's failure, if it failed.
    fn into_result(self) -> Result<(), BoxError>;
}

impl FinalizerOutput for () {
    fn into_result(self) -> Result<(), BoxError> {
        Ok(())
    }
}

impl<E: Into<BoxError> + Send + 'static> FinalizerOutput for Result<(), E> {
    fn into_result(self) -> Result<(), BoxError> {
        self.map_err(Into::into)
    }
}

/// A finalizer's future, as it runs.
type Running = CatchUnwind<BoxFuture<'static, Result<(), BoxError>>>;

/// The finalizer failure a call reports.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) provider: Option<&'static str>,
    pub(crate) source: BoxError,
}

impl Failure {
    /// For a failure no caller will hear of.
    fn log(&self) {
        tracing::error!(provider = self.provider, error = %self.source, "a request finalizer failed");
    }
}

/// A panicking finalizer, as the error of the call it fails.
#[derive(Debug, thiserror::Error)]
#[error("the finalizer panicked: {0}")]
struct Panicked(String);

/// Runs finalizers newest first, each to its end. The first to fail after
/// a call that succeeded is the call's failure (the caller reports it); the
/// finalizers after it see [`Outcome::Error`]. Every other failure is
/// logged, since nobody else will hear of it.
pub(crate) struct Finalizing {
    /// Not yet started, oldest first (they run from the back).
    pending: Vec<Finalizer>,
    /// The one running, and who registered it.
    running: Option<(Option<&'static str>, Running)>,
    outcome: Outcome,
    /// Whether a failure goes to a caller (`failure`) rather than the log.
    reported: bool,
    failure: Option<Failure>,
}

impl Finalizing {
    /// Closing a call that ended with `outcome`; a caller awaits it.
    pub(crate) fn new(pending: Vec<Finalizer>, outcome: Outcome) -> Self {
        Finalizing {
            pending,
            running: None,
            outcome,
            reported: outcome.is_ok(),
            failure: None,
        }
    }

    fn finished(&self) -> bool {
        self.running.is_none() && self.pending.is_empty()
    }

    /// Hands what is left to the runtime, which runs it to the end and logs
    /// any failure: nobody waits for the call any more.
    pub(crate) fn detach(mut self) {
        // A failure recorded for a caller that is gone is only logged now.
        if let Some(failure) = self.failure.take() {
            failure.log();
        }
        if self.finished() {
            return;
        }
        self.reported = false;
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => drop(handle.spawn(self)),
            // A call driven by another executor and dropped outside any
            // tokio runtime: the finalizers run here, so that none is lost.
            // On a runtime of their own: finalizers may use tokio's timers
            // and I/O (whichever of tokio's features the build has).
            Err(_) => {
                tracing::warn!("no tokio runtime: a dropped call's finalizers run on this thread");
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build();
                match runtime {
                    Ok(runtime) => drop(runtime.block_on(self)),
                    Err(error) => tracing::error!(
                        %error,
                        "a dropped call's finalizers were not run: no runtime could be started"
                    ),
                }
            }
        }
    }

    fn failed(&mut self, provider: Option<&'static str>, source: BoxError) {
        let failure = Failure { provider, source };
        if self.reported && self.failure.is_none() {
            self.failure = Some(failure);
        } else {
            failure.log();
        }
        if self.outcome.is_ok() {
            self.outcome = Outcome::Error;
        }
    }
}

impl Future for Finalizing {
    type Output = Option<Failure>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        loop {
            let (provider, running) = match &mut self.running {
                Some(running) => running,
                None => match self.pending.pop() {
                    Some(finalizer) => {
                        let outcome = self.outcome;
                        let future = CatchUnwind::new((finalizer.run)(outcome));
                        self.running.insert((finalizer.provider, future))
                    }
                    None => return Poll::Ready(self.failure.take()),
                },
            };
            let provider = *provider;
            let Poll::Ready(ended) = Pin::new(running).poll(cx) else {
                return Poll::Pending;
            };
            self.running = None;
            match ended {
                Ok(Ok(())) => {}
                Ok(Err(source)) => self.failed(provider, source),
                Err(message) => self.failed(provider, Box::new(Panicked(message))),
            }
        }
    }
}

/// [`Finalizing`] as a call's close awaits it. If the call's future is
/// dropped part-way, `Drop` hands the finalizer that was running and those
/// not yet started to the runtime, so each still runs exactly once.
pub(crate) struct Closing(pub(crate) Finalizing);

impl Future for Closing {
    type Output = Option<Failure>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl Drop for Closing {
    fn drop(&mut self) {
        let outcome = self.0.outcome;
        std::mem::replace(&mut self.0, Finalizing::new(Vec::new(), outcome)).detach();
    }
}

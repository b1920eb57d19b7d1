//! The REQUEST scope of one call, and the guard that closes it.

use std::any::TypeId;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::cell::{Building, Cell, Claim};
use super::container::{Container, Erased, Source, downcast};
use super::cycle::{Waiting, Waits};
use super::finalize::{Closing, Failure, Finalizer, FinalizerOutput, Finalizing};
use super::{Outcome, ResolveError};
use crate::error::CallError;
use crate::tool_str::ToolStr;

/// The REQUEST scope of one call: values built for it, and the finalizers
/// that run when it closes.
///
/// Cheap to clone; every clone is the same scope. The executor opens one for
/// each call of a tool with injected parameters and hands it to REQUEST
/// factories and [`FromScope`](crate::scope::FromScope) impls; it closes it, running the finalizers,
/// before the call returns.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, Inject, Invocation, scope::{ResolveError, Scope}};
///
/// #[derive(Default)]
/// struct Journal(Mutex<Vec<&'static str>>);
/// struct Transaction;
///
/// /// Reserve stock.
/// #[tool(key = "stock.reserve", effect = write, authorize = public, approve = approved)]
/// async fn reserve(quantity: u32, _tx: Inject<Transaction>) -> Result<u32, std::io::Error> {
///     if quantity > 10 {
///         return Err(std::io::Error::other("not enough stock"));
///     }
///     Ok(quantity)
/// }
///
/// async fn approved(_: &(), _: &Invocation<'_, ReserveArgs>) -> bool { true }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let journal = Arc::new(Journal::default());
/// let container = Container::builder()
///     .app(journal.clone())
///     .request::<Transaction>(|scope: Scope| async move {
///         let journal = scope.resolve::<Journal>().await?;
///         scope.on_close(move |outcome| async move {
///             let end = if outcome.is_ok() { "commit" } else { "rollback" };
///             journal.0.lock().unwrap().push(end);
///         });
///         Ok::<_, ResolveError>(Transaction)
///     })
///     .build();
/// let catalog = Catalog::builder().register::<ReserveArgs>().build().unwrap();
/// let executor = Executor::new(catalog, container).unwrap();
///
/// assert!(executor.invoke("reserve", json!({"quantity": 2}), &()).await.is_ok());
/// assert!(executor.invoke("reserve", json!({"quantity": 50}), &()).await.is_err());
/// assert_eq!(*journal.0.lock().unwrap(), ["commit", "rollback"]);
/// # }
/// ```
#[derive(Clone)]
pub struct Scope {
    inner: Arc<ScopeInner>,
    /// The REQUEST provider's build this handle was given to: its slot and
    /// the build's number in that slot (a failed build is tried again).
    /// What the handle asks for, that build waits for, while it lasts.
    builder: Option<(usize, u32)>,
}

struct ScopeInner {
    container: Container,
    /// This call's REQUEST values, one cell per provider (its `slot`).
    cells: Box<[Cell]>,
    waits: Waits,
    finalizers: Mutex<Finalizers>,
}

#[derive(Default)]
struct Finalizers {
    pending: Vec<Finalizer>,
    closed: Option<Outcome>,
}

impl Scope {
    pub(crate) fn new(container: Container) -> Self {
        let cells = (0..container.inner.slots)
            .map(|_| Cell::default())
            .collect();
        Scope {
            inner: Arc::new(ScopeInner {
                container,
                cells,
                waits: Waits::default(),
                finalizers: Mutex::new(Finalizers::default()),
            }),
            builder: None,
        }
    }

    /// Resolves a `T`: the APP value, or this call's REQUEST value (built
    /// now if nobody asked before; concurrent askers wait for one build).
    /// Asked through the scope a REQUEST factory was given, for a value
    /// whose build waits (directly or through others) for that factory's
    /// own, it fails with [`ResolveError::Cycle`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Inject, scope::FromScope};
    /// use toolwright::{scope::{Requirement, ResolveError, Scope}};
    ///
    /// struct Session { user: String }
    ///
    /// /// The signed-in user, read from the call's session.
    /// struct User(String);
    ///
    /// impl FromScope for User {
    ///     async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
    ///         let session = scope.resolve::<Session>().await?;
    ///         Ok(User(session.user.clone()))
    ///     }
    ///     fn requirements(out: &mut Vec<Requirement>) {
    ///         out.push(Requirement::of::<Session>());
    ///     }
    /// }
    ///
    /// /// Say who is signed in.
    /// #[tool(key = "session.whoami", effect = read, authorize = public)]
    /// async fn whoami(session: Inject<Session>, #[inject] user: User) -> bool {
    ///     session.user == user.0
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let opened = Arc::new(AtomicUsize::new(0));
    /// let counter = opened.clone();
    /// let container = Container::builder()
    ///     .request::<Session>(move |_: Scope| {
    ///         counter.fetch_add(1, Ordering::Relaxed);
    ///         async { Ok::<_, ResolveError>(Session { user: "ada".into() }) }
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<WhoamiArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    ///
    /// assert_eq!(executor.invoke("whoami", json!({}), &()).await.unwrap(), true);
    /// // Both parameters resolved the session; it was opened once.
    /// assert_eq!(opened.load(Ordering::Relaxed), 1);
    /// # }
    /// ```
    pub async fn resolve<T: ?Sized + Send + Sync + 'static>(&self) -> Result<Arc<T>, ResolveError> {
        let id = TypeId::of::<T>();
        let type_name = std::any::type_name::<T>();
        let container = &self.inner.container.inner;
        // Borrowed, not cloned: only the `Arc<T>` inside is.
        let erased = match container.sources.get(&id) {
            Some(Source::App(value)) => value,
            Some(Source::Request(provider)) => {
                let slot = provider.slot;
                // A provider's build asking: it waits from here on. A
                // handle kept past its build (which failed, or is over)
                // asks as any other caller does.
                let _waiting = match self.builder {
                    Some((waiter, build)) if self.inner.cells[waiter].is_building(build) => Some(
                        Waiting::start(&self.inner.waits, &self.inner.container, waiter, slot)
                            .map_err(|path| ResolveError::Cycle { type_name, path })?,
                    ),
                    _ => None,
                };
                let cell = &self.inner.cells[slot];
                let read = |value: &Erased| downcast::<T>(value).clone();
                // The value, if it is built; otherwise this asker builds it.
                let build = match std::future::poll_fn(|cx| cell.poll_claim(cx, read)).await {
                    Claim::Built(value) => return Ok(value),
                    Claim::Build(build) => build,
                };
                let building = Building {
                    cell,
                    build,
                    done: false,
                };
                let scope = Scope {
                    inner: self.inner.clone(),
                    builder: Some((slot, build)),
                };
                return match (provider.factory)(scope).await {
                    Ok(value) => Ok(building.finish(value, read)),
                    // `building` lets the next asker try again.
                    Err(source) => Err(ResolveError::Failed { type_name, source }),
                };
            }
            None => return Err(ResolveError::Missing { type_name }),
        };
        Ok(downcast::<T>(erased).clone())
    }

    /// Registers a finalizer, run once when the call ends, with its outcome.
    ///
    /// Finalizers run in reverse order of registration. A finalizer may
    /// end with `()` or with a `Result` ([`FinalizerOutput`]): when the
    /// call had succeeded and a finalizer fails (returns `Err` or panics),
    /// the call fails with [`CallError::Finalizer`], which names the
    /// provider that registered it and keeps its error as the source, and
    /// the finalizers after it see [`Outcome::Error`]. A commit that fails
    /// is never reported as success. Every finalizer still runs exactly
    /// once; failures nobody is told of (after a failed call, or a second
    /// one) are logged through `tracing`.
    ///
    /// If the caller drops the call, before or while its finalizers run,
    /// those not yet finished are handed to the tokio runtime and still
    /// run, each exactly once (the one that was running goes on from
    /// where it was); outside any tokio runtime they run on the thread
    /// that dropped the call.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use serde_json::json;
    /// use toolwright::{tool, Catalog, Container, Executor, Inject, scope::{ResolveError, Scope}};
    ///
    /// #[derive(Default)]
    /// struct Log(Mutex<Vec<&'static str>>);
    /// struct Connection;
    /// struct Transaction;
    ///
    /// /// Count the orders.
    /// #[tool(key = "orders.count", effect = read, authorize = public)]
    /// async fn count_orders(_tx: Inject<Transaction>) -> u64 { 0 }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// let log = Arc::new(Log::default());
    /// let container = Container::builder()
    ///     .app(log.clone())
    ///     .request::<Connection>(|scope: Scope| async move {
    ///         let log = scope.resolve::<Log>().await?;
    ///         scope.on_close(move |_| async move { log.0.lock().unwrap().push("release") });
    ///         Ok::<_, ResolveError>(Connection)
    ///     })
    ///     .request::<Transaction>(|scope: Scope| async move {
    ///         let _connection = scope.resolve::<Connection>().await?;
    ///         let log = scope.resolve::<Log>().await?;
    ///         scope.on_close(move |outcome| async move {
    ///             log.0.lock().unwrap().push(if outcome.is_ok() { "commit" } else { "rollback" });
    ///         });
    ///         Ok::<_, ResolveError>(Transaction)
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<CountOrdersArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    /// executor.invoke("count_orders", json!({}), &()).await.unwrap();
    ///
    /// // The transaction ends before the connection it ran on is released.
    /// assert_eq!(*log.0.lock().unwrap(), ["commit", "release"]);
    /// # }
    /// ```
    pub fn on_close<F, Fut>(&self, finalizer: F)
    where
        F: FnOnce(Outcome) -> Fut + Send + 'static,
        Fut: Future + Send + 'static,
        Fut::Output: FinalizerOutput,
    {
        let finalizer = Finalizer {
            run: Box::new(move |outcome| {
                let run = finalizer(outcome);
                Box::pin(async move { run.await.into_result() })
            }),
            provider: self
                .builder
                .map(|(slot, _)| self.inner.container.type_name(slot)),
        };
        let mut state = self
            .inner
            .finalizers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        match state.closed {
            None => state.pending.push(finalizer),
            // Registered after the call ended (a provider that outlived it):
            // still run exactly once, with the call's outcome.
            Some(outcome) => {
                drop(state);
                Finalizing::new(vec![finalizer], outcome).detach();
            }
        }
    }

    /// Runs every finalizer with `outcome`, newest first.
    /// Runs every finalizer with `outcome`, newest first; the failure to
    /// report, if the call had succeeded and a finalizer failed.
    async fn close(&self, outcome: Outcome) -> Option<Failure> {
        let finalizers = self.take_finalizers(outcome)?;
        Closing(Finalizing::new(finalizers, outcome)).await
    }

    fn take_finalizers(&self, outcome: Outcome) -> Option<Vec<Finalizer>> {
        let mut state = self
            .inner
            .finalizers
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if state.closed.is_some() {
            return None;
        }
        state.closed = Some(outcome);
        Some(std::mem::take(&mut state.pending))
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope").finish_non_exhaustive()
    }
}

/// Closes a scope when the pipeline is done with it, or, if the caller
/// dropped the call first, hands the finalizers to the runtime with
/// [`Outcome::Cancelled`].
pub(crate) struct ScopeGuard {
    scope: Scope,
    /// Whether [`close`](Self::close) took the finalizers, so that `Drop`
    /// need not lock them again to find out.
    closed: AtomicBool,
}

impl ScopeGuard {
    pub(crate) fn open(container: &Container) -> Self {
        ScopeGuard {
            scope: Scope::new(container.clone()),
            closed: AtomicBool::new(false),
        }
    }

    pub(crate) fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Runs the finalizers with `outcome`, the way the body of tool `key`
    /// ended, and returns the call's `result`: an error if it had succeeded
    /// and a finalizer failed. By reference: the call's future still holds
    /// the guard, whose scope the (dropped) body borrowed.
    pub(crate) async fn close<O>(
        &self,
        key: &ToolStr,
        outcome: Outcome,
        result: Result<O, CallError>,
    ) -> Result<O, CallError> {
        self.closed.store(true, Ordering::Relaxed);
        match self.scope.close(outcome).await {
            Some(Failure { provider, source }) if result.is_ok() => Err(CallError::Finalizer {
                key: key.clone(),
                finalizer: provider,
                source,
            }),
            _ => result,
        }
    }
}

impl Drop for ScopeGuard {
    fn drop(&mut self) {
        if !*self.closed.get_mut()
            && let Some(finalizers) = self.scope.take_finalizers(Outcome::Cancelled)
        {
            Finalizing::new(finalizers, Outcome::Cancelled).detach();
        }
    }
}

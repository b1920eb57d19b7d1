//! Dependencies: APP values shared by every call, REQUEST values built
//! lazily once per call, and the finalizers that close them.
//!
//! [`Container`] holds the providers (`container`); each call that injects
//! a value opens a [`Scope`] (`request`), whose values are build-once
//! cells (`cell`) with cycle detection between their builds (`cycle`), and
//! closes it by running its finalizers (`finalize`).

mod cell;
mod container;
mod cycle;
mod finalize;
mod inject;
mod request;

use std::any::TypeId;
use std::fmt;

pub use container::{Container, ContainerBuilder, RequestFactory};
pub use finalize::FinalizerOutput;
pub use inject::{FromScope, Inject};
pub use request::Scope;
pub(crate) use request::ScopeGuard;

use crate::error::{BoxError, CallError};
use crate::tool_str::ToolStr;

/// How a call ended, as its request finalizers see it.
///
/// ```
/// use toolwright::scope::Outcome;
/// assert!(Outcome::Ok.is_ok());
/// assert!(!Outcome::Cancelled.is_ok());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Outcome {
    /// The tool returned a value.
    Ok,
    /// The tool, or something it depended on, returned an error.
    Error,
    /// The tool panicked.
    Panicked,
    /// The call was cancelled: it timed out, or the caller dropped it.
    Cancelled,
}

impl Outcome {
    /// Whether the call succeeded (commit), as opposed to anything else (roll back).
    ///
    /// ```
    /// use toolwright::scope::Outcome;
    ///
    /// let end = |outcome: Outcome| if outcome.is_ok() { "commit" } else { "rollback" };
    /// assert_eq!(end(Outcome::Ok), "commit");
    /// assert_eq!(end(Outcome::Error), "rollback");
    /// assert_eq!(end(Outcome::Cancelled), "rollback");
    /// ```
    pub fn is_ok(self) -> bool {
        self == Outcome::Ok
    }
}

/// A type a tool needs injected, as reported when the executor is built.
///
/// [`FromScope::requirements`] lists them; the executor checks each against
/// the container.
///
/// ```
/// use toolwright::{Inject, scope::{FromScope, Requirement}};
///
/// trait Mailer: Send + Sync {}
///
/// let mut needed = Vec::new();
/// Inject::<dyn Mailer>::requirements(&mut needed);
/// assert_eq!(needed, [Requirement::of::<dyn Mailer>()]);
/// assert!(needed[0].type_name.ends_with("Mailer"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Requirement {
    /// The injected type's id.
    pub type_id: TypeId,
    /// The injected type's name, for messages.
    pub type_name: &'static str,
}

impl Requirement {
    /// The requirement of a value of type `T`.
    ///
    /// ```
    /// use std::any::TypeId;
    /// use toolwright::scope::Requirement;
    ///
    /// struct Db;
    ///
    /// let db = Requirement::of::<Db>();
    /// assert_eq!(db.type_id, TypeId::of::<Db>());
    /// assert_ne!(db, Requirement::of::<String>());
    /// ```
    pub fn of<T: ?Sized + 'static>() -> Self {
        Requirement {
            type_id: TypeId::of::<T>(),
            type_name: std::any::type_name::<T>(),
        }
    }
}

/// Why a value could not be resolved from a [`Scope`].
///
/// A tool whose injected value fails to resolve fails with
/// [`CallError::DependencyMissing`] or [`CallError::Dependency`]; a
/// [`FromScope`] impl can also handle the error itself, here to make a
/// dependency optional:
///
/// ```
/// use std::sync::Arc;
/// use serde_json::json;
/// use toolwright::{tool, Catalog, Container, Executor, scope::{FromScope, ResolveError, Scope}};
///
/// /// The caller's language; English when nothing provides one.
/// struct Language(Arc<str>);
///
/// impl FromScope for Language {
///     async fn from_scope(scope: &Scope) -> Result<Self, ResolveError> {
///         match scope.resolve::<str>().await {
///             Ok(tag) => Ok(Language(tag)),
///             Err(ResolveError::Missing { .. }) => Ok(Language("en".into())),
///             Err(other) => Err(other),
///         }
///     }
/// }
///
/// /// Say hello.
/// #[tool(key = "demo.hello", effect = read, authorize = public)]
/// async fn hello(#[inject] language: Language) -> String {
///     format!("hello in `{}`", language.0)
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let catalog = Catalog::builder().register::<HelloArgs>().build().unwrap();
/// let english = Executor::new(catalog.clone(), Container::default()).unwrap();
/// assert_eq!(english.invoke("hello", json!({}), &()).await.unwrap(), "hello in `en`");
///
/// let french = Container::builder().app::<str>(Arc::from("fr")).build();
/// let french = Executor::new(catalog, french).unwrap();
/// assert_eq!(french.invoke("hello", json!({}), &()).await.unwrap(), "hello in `fr`");
///
/// let missing = ResolveError::Missing { type_name: "Language" };
/// assert_eq!(missing.to_string(), "no provider for `Language`");
/// # }
/// ```
///
/// [`CallError::DependencyMissing`]: crate::CallError::DependencyMissing
/// [`CallError::Dependency`]: crate::CallError::Dependency
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// Nothing provides the type.
    #[error("no provider for `{type_name}`")]
    Missing {
        /// The type asked for.
        type_name: &'static str,
    },
    /// The request provider returned an error.
    #[error("the provider of `{type_name}` failed")]
    Failed {
        /// The type asked for.
        type_name: &'static str,
        /// The provider's error.
        #[source]
        source: BoxError,
    },
    /// A REQUEST provider asked, directly or through other providers, for
    /// the value it is building: waiting would never end, so the ask fails.
    /// The provider that asked usually returns this with `?`, and its own
    /// asker then sees it as the [`source`](std::error::Error::source) of
    /// [`ResolveError::Failed`]; the call fails with
    /// [`CallError::Dependency`].
    ///
    /// The [`Scope`] a provider gets speaks for its build while the build
    /// lasts. Kept afterwards (in the value, or in a task), it asks as any
    /// other caller does, and what it waits for is no part of a cycle.
    ///
    /// ```
    /// use std::error::Error as _;
    /// use serde_json::json;
    /// use toolwright::{tool, CallError, Catalog, Container, Executor, Inject};
    /// use toolwright::{scope::{ResolveError, Scope}};
    ///
    /// struct Session;
    /// struct User;
    ///
    /// /// Say whether someone is signed in.
    /// #[tool(key = "session.active", effect = read, authorize = public)]
    /// async fn active(_user: Inject<User>) -> bool { true }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// // Each provider asks for the other's value.
    /// let container = Container::builder()
    ///     .request::<Session>(|scope: Scope| async move {
    ///         scope.resolve::<User>().await?;
    ///         Ok::<_, ResolveError>(Session)
    ///     })
    ///     .request::<User>(|scope: Scope| async move {
    ///         scope.resolve::<Session>().await?;
    ///         Ok::<_, ResolveError>(User)
    ///     })
    ///     .build();
    /// let catalog = Catalog::builder().register::<ActiveArgs>().build().unwrap();
    /// let executor = Executor::new(catalog, container).unwrap();
    ///
    /// // The call fails instead of waiting forever.
    /// let error = executor.invoke("active", json!({}), &()).await.unwrap_err();
    /// assert!(matches!(&error, CallError::Dependency { key, .. } if key == "session.active"));
    /// // The user's provider asked for the session, whose provider asked for
    /// // the user: the session's build failed, with the cycle as its source.
    /// let failed = error.source().unwrap().downcast_ref::<ResolveError>().unwrap();
    /// assert!(matches!(failed, ResolveError::Failed { type_name, .. } if type_name.ends_with("Session")));
    /// let cycle = failed.source().unwrap().downcast_ref::<ResolveError>().unwrap();
    /// let ResolveError::Cycle { path, .. } = cycle else { panic!("{cycle:?}") };
    /// let path: Vec<_> = path.iter().map(|name| name.rsplit("::").next().unwrap()).collect();
    /// assert_eq!(path, ["Session", "User", "Session"]);
    /// assert!(cycle.to_string().starts_with("providers wait for each other: `"));
    /// # }
    /// ```
    ///
    /// [`CallError::Dependency`]: crate::CallError::Dependency
    #[error("providers wait for each other: {}", CyclePath(path))]
    Cycle {
        /// The type asked for.
        type_name: &'static str,
        /// The types whose builds wait, each for the next: it starts and
        /// ends with the type whose provider asked.
        path: Vec<&'static str>,
    },
}

/// A cycle of types as `` `A` → `B` → `A` ``.
struct CyclePath<'a>(&'a [&'static str]);

impl fmt::Display for CyclePath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, type_name) in self.0.iter().enumerate() {
            let arrow = if i == 0 { "" } else { " → " };
            write!(f, "{arrow}`{type_name}`")?;
        }
        Ok(())
    }
}

impl ResolveError {
    pub(crate) fn for_tool(self, tool: &'static str) -> CallError {
        let key = ToolStr::from_static(tool);
        match self {
            ResolveError::Missing { type_name } => CallError::DependencyMissing { key, type_name },
            ResolveError::Failed { type_name, source } => CallError::Dependency {
                key,
                type_name,
                source,
            },
            cycle @ ResolveError::Cycle { type_name, .. } => CallError::Dependency {
                key,
                type_name,
                source: Box::new(cycle),
            },
        }
    }
}

//! Small pieces every layer uses: JSON values, hash maps, panic catching,
//! lists of problems and bounded quotes of caller input.

pub(crate) mod excerpt;
pub(crate) mod hash;
pub(crate) mod intern;
pub(crate) mod json;
#[cfg(any(feature = "mcp", feature = "import-mcp"))]
pub(crate) mod json_id;
pub(crate) mod names;
pub(crate) mod panic;
pub(crate) mod time;

use std::fmt;

/// A boxed, sendable future, the shape of every erased step of the pipeline.
///
/// ```
/// use toolwright::executor::BoxFuture;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // Futures of different types, in one list.
/// let checks: Vec<BoxFuture<'static, bool>> = vec![
///     Box::pin(async { true }),
///     Box::pin(async { "ok".len() == 2 }),
/// ];
/// for check in checks {
///     // `Send` and `'static`, so it can be spawned.
///     assert!(tokio::spawn(check).await.unwrap());
/// }
/// # }
/// ```
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;

/// `items` separated by `"; "`: how every error that gathers several
/// problems (a catalog's, an executor's, a call's violations) reads.
pub(crate) struct Joined<'a, T>(pub(crate) &'a [T]);

impl<T: fmt::Display> fmt::Display for Joined<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

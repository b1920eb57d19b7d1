//! The future of a tool body that takes only inputs and cannot fail. In a
//! module of its own: its instances hold every such tool's body future, and
//! an incremental build compiles the instances of one module's generic
//! items in one codegen unit, again whole whenever any tool's body is
//! edited; here, that unit holds nothing else. (In a debug build the
//! body's future is boxed first, a [`BodyFuture`](super::BodyFuture), so
//! these instances do not depend on any body: an edit leaves them be.)

use std::future::Future;

use crate::error::CallError;

/// The body of a tool that takes only inputs and cannot fail: its fn's
/// future, with the output in `Ok`. A plain future, where an `async`
/// block would be one more state machine for every such tool to compile.
pub fn infallible<F: Future>(body: F) -> Infallible<F> {
    Infallible { body }
}

pin_project_lite::pin_project! {
    /// See [`infallible`].
    pub struct Infallible<F> {
        #[pin]
        body: F,
    }
}

impl<F: Future> Future for Infallible<F> {
    type Output = Result<F::Output, CallError>;

    fn poll(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        self.project().body.poll(cx).map(Ok)
    }
}

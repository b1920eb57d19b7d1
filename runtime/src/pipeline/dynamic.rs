//! Tools built at run time (`DynamicTool`): JSON in, JSON out, through the
//! same steps as `#[tool]`s, with [`Arguments`] as their one seam.

use std::sync::Arc;

use serde_json::Value;

use super::seam::{self, Declared, Parts};
use super::{Env, steps};
use crate::dynamic_call::{Arguments, Dynamic};
use crate::error::CallError;
use crate::util::BoxFuture;

/// A JSON call of a tool built at run time: its one future, steps 2 to 7,
/// its output as it is.
pub(crate) fn json<'a>(
    env: Env<'a>,
    tool: &Arc<Dynamic>,
    arguments: Value,
) -> BoxFuture<'a, Result<Value, CallError>> {
    let secrets = steps::secret_values(&env, &arguments);
    let tool = tool.clone();
    let call = Box::pin(async move {
        steps::validate(env, &arguments)?;
        let invocation = Parts::of(env).invocation(Arguments::new(arguments, tool));
        seam::run(env, Declared::of::<Arguments>(), invocation, None).await
    });
    steps::keeping_secrets(env, secrets, call)
}

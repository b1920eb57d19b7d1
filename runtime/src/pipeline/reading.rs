//! What the seam does per tool that does not hold the tool's body: step 2
//! (its arguments read), the hooks' view of its invocation, its output.
//! Kept apart from `seam.rs`, whose instances hold the body's future: in
//! an incremental build, the instances of one module's generic items share
//! a codegen unit, compiled again whole when any of them changes, and an
//! edit to a tool's body changes only those that hold it (see the compile
//! cost in BENCHMARKS.md).

use serde::Serialize;
use serde_json::Value;

use super::object::Object;
use super::seam::{Asking, Declared, Out};
use super::{Env, steps};
use crate::context::ErasedContext;
use crate::error::CallError;
use crate::hook::Asked;
use crate::invocation::Invocation;
use crate::request::ApprovalId;
use crate::tool::Tool;
use crate::tool_str::ToolStr;

/// Step 2 for `T`: its JSON arguments validated and deserialized.
pub(super) fn read<T: Tool>(
    env: Env<'_>,
    declared: Declared,
    arguments: Value,
) -> Result<T, CallError> {
    let mut read = None;
    steps::read(
        env,
        declared,
        arguments,
        reread::<T>,
        &mut |value, failed| {
            read = Some(T::__deserialize(Object(value), failed)?);
            Ok(())
        },
    )?;
    steps::was_read(env, read)
}

/// Valid JSON arguments of `T`, read again and serialized.
pub(super) fn reread<T: Tool>(sent: &Value) -> Value {
    super::arguments::reread(sent, &mut |value| {
        let args = T::__deserialize(Object(value), None)?;
        crate::util::json::to_value(&args)
    })
}

impl<T: Tool> Asking for Invocation<'_, T> {
    fn authorize<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b> {
        T::__authorize(ctx, self).erased()
    }

    fn approve<'b>(&'b self, ctx: ErasedContext<'b>) -> Asked<'b> {
        T::__approve(ctx, self).erased()
    }

    fn consumed(&self) -> Option<ApprovalId> {
        Invocation::consumed(self)
    }
}

/// `output` of tool `key`, serialized, or put into a typed caller's slot.
pub(super) fn finish<O: Serialize + Send + 'static>(
    key: &'static str,
    output: O,
    out: Out<'_>,
) -> Result<Value, CallError> {
    let Some(out) = out else {
        return crate::util::json::to_value(&output).map_err(|source| CallError::Output {
            key: ToolStr::from_static(key),
            source,
        });
    };
    match out.downcast_mut::<Option<O>>() {
        Some(slot) => {
            *slot = Some(output);
            Ok(Value::Null)
        }
        // A typed call always brings the slot of its tool's output type.
        None => Err(CallError::Panicked {
            key: ToolStr::from_static(key),
            message: "the typed call's output slot has another type".to_owned(),
        }),
    }
}

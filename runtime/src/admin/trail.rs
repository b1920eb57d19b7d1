//! What an operator changes in the registry, in the executor's audit
//! trail (when it has one).

use std::time::SystemTime;

use http::StatusCode;

use super::Shared;
use super::api::Failure;
use crate::audit::{AuditRecord, RegistryAction, RegistryRecord};
use crate::registry::Change;

/// Records that `by` made `change` (`action`, for `reason`). The change is
/// made already (the registry changes in memory at once): a record that
/// fails is logged and answered `503`, saying that the change stands.
pub(crate) async fn record(
    shared: &Shared,
    action: RegistryAction,
    by: &str,
    change: &Change,
    reason: Option<&str>,
) -> Result<(), Failure> {
    let Some(trail) = shared.executor.audit_trail() else {
        return Ok(());
    };
    let record = AuditRecord::Registry(RegistryRecord {
        action,
        by: by.to_owned(),
        at: SystemTime::now(),
        keys: change.keys.clone(),
        generation: change.generation,
        reason: reason.map(str::to_owned),
    });
    trail.record(&record).await.map_err(|error| {
        tracing::error!(
            error = %error,
            cause = %error.0,
            action = action.as_str(),
            by,
            generation = change.generation,
            "audit trail: an operator's registry change could not be recorded; it stands"
        );
        Failure::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the registry changed (generation {}), but the audit trail could not record it",
                change.generation
            ),
        )
    })
}

//! The shared state's table: one row per registry and tool.

use crate::sql::Schema;

/// `toolwright_registry_state`, and the sequence that numbers its writes,
/// as each version made them.
pub(super) const SCHEMA: Schema = Schema {
    component: "registry_state",
    versions: &[&[
        "CREATE SEQUENCE toolwright_registry_versions",
        "CREATE TABLE toolwright_registry_state (
            registry TEXT NOT NULL,
            tool_key TEXT NOT NULL,
            state {json} NOT NULL,
            version {bigint} NOT NULL,
            replica TEXT NOT NULL,
            PRIMARY KEY (registry, tool_key)
        )",
        "CREATE INDEX toolwright_registry_state_by_version
            ON toolwright_registry_state (registry, version)",
    ]],
};

/// The channel every replica listens on; a notification's payload names
/// the registry (see [`Notice`](super::store::Notice)).
pub(super) const CHANNEL: &str = "toolwright_registry";

//! The ledger's table and the columns every statement reads back.

use crate::sql::Schema;

/// `toolwright_approvals` and its indexes, as each version made them.
pub(super) const SCHEMA: Schema = Schema {
    component: "approvals",
    versions: &[&[
        "CREATE TABLE toolwright_approvals (
            id {id},
            tool_key TEXT NOT NULL,
            tool_name TEXT NOT NULL,
            arguments {json} NOT NULL,
            digest TEXT NOT NULL,
            requested_by TEXT NOT NULL,
            requested_at {bigint} NOT NULL,
            expires_at {bigint} NOT NULL,
            status TEXT NOT NULL
                CHECK (status IN ('pending', 'approved', 'rejected', 'consumed', 'settled')),
            decided_by TEXT,
            decided_at {bigint},
            reason TEXT,
            consumed_at {bigint},
            settled_at {bigint},
            settlement TEXT CHECK (settlement IN ('succeeded', 'failed', 'unknown'))
        )",
        "CREATE INDEX toolwright_approvals_by_call
            ON toolwright_approvals (digest, requested_by, status)",
        "CREATE INDEX toolwright_approvals_by_status ON toolwright_approvals (status, id)",
    ]],
};

/// Every column, as [`approval`](super::row::approval) reads them: the
/// arguments as text, whichever type holds them.
macro_rules! columns {
    () => {
        "id, tool_key, tool_name, CAST(arguments AS TEXT) AS arguments, digest, requested_by, \
         requested_at, expires_at, status, decided_by, decided_at, reason, consumed_at, \
         settled_at, settlement"
    };
}
pub(super) use columns;

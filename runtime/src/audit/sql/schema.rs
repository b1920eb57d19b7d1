//! The trail's table, and the statement that adds a row to it.

use crate::sql::Schema;

/// `toolwright_audit` and its indexes, as each version made them.
pub(super) const SCHEMA: Schema = Schema {
    component: "audit",
    versions: &[
        &[
            "CREATE TABLE toolwright_audit (
            seq {id},
            kind TEXT NOT NULL CHECK (kind IN ('call', 'decision', 'decision_refused')),
            at {bigint} NOT NULL,
            call_id {bigint},
            tool_key TEXT,
            tool_name TEXT,
            effect TEXT,
            actor TEXT,
            arguments {json},
            digest TEXT,
            policy TEXT,
            policy_rule TEXT,
            approval_id {bigint},
            approval_use TEXT,
            outcome TEXT NOT NULL,
            error TEXT,
            reason TEXT,
            requested_by TEXT,
            duration_ms {bigint}
        )",
            "CREATE INDEX toolwright_audit_by_time ON toolwright_audit (at)",
            "CREATE INDEX toolwright_audit_by_call ON toolwright_audit (call_id)",
        ],
        &[
            // Version 2: registry changes (kind `registry`, with the keys and
            // the generation). SQLite cannot widen a CHECK in place: its table
            // is rebuilt, `seq` and its counter kept.
            "sqlite: CREATE TABLE toolwright_audit_v2 (
            seq {id},
            kind TEXT NOT NULL
                CHECK (kind IN ('call', 'decision', 'decision_refused', 'registry')),
            at {bigint} NOT NULL,
            call_id {bigint},
            tool_key TEXT,
            tool_name TEXT,
            effect TEXT,
            actor TEXT,
            arguments {json},
            digest TEXT,
            policy TEXT,
            policy_rule TEXT,
            approval_id {bigint},
            approval_use TEXT,
            outcome TEXT NOT NULL,
            error TEXT,
            reason TEXT,
            requested_by TEXT,
            duration_ms {bigint},
            tool_keys {json},
            generation {bigint}
        )",
            "sqlite: INSERT INTO toolwright_audit_v2
            (seq, kind, at, call_id, tool_key, tool_name, effect, actor, arguments, digest,
             policy, policy_rule, approval_id, approval_use, outcome, error, reason,
             requested_by, duration_ms)
            SELECT seq, kind, at, call_id, tool_key, tool_name, effect, actor, arguments,
             digest, policy, policy_rule, approval_id, approval_use, outcome, error, reason,
             requested_by, duration_ms
            FROM toolwright_audit",
            "sqlite: UPDATE sqlite_sequence
            SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'toolwright_audit')
            WHERE name = 'toolwright_audit_v2'",
            "sqlite: DROP TABLE toolwright_audit",
            "sqlite: ALTER TABLE toolwright_audit_v2 RENAME TO toolwright_audit",
            "sqlite: CREATE INDEX toolwright_audit_by_time ON toolwright_audit (at)",
            "sqlite: CREATE INDEX toolwright_audit_by_call ON toolwright_audit (call_id)",
            "postgres: ALTER TABLE toolwright_audit DROP CONSTRAINT toolwright_audit_kind_check",
            "postgres: ALTER TABLE toolwright_audit ADD CONSTRAINT toolwright_audit_kind_check
            CHECK (kind IN ('call', 'decision', 'decision_refused', 'registry'))",
            "postgres: ALTER TABLE toolwright_audit ADD COLUMN tool_keys {json}",
            "postgres: ALTER TABLE toolwright_audit ADD COLUMN generation {bigint}",
        ],
    ],
};

/// One record, its columns bound in order by [`bind`](super::row::bind).
pub(super) const INSERT: &str = "INSERT INTO toolwright_audit
    (kind, at, call_id, tool_key, tool_name, effect, actor, arguments, digest, policy,
     policy_rule, approval_id, approval_use, outcome, error, reason, requested_by, duration_ms,
     tool_keys, generation)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8{as_json}, $9, $10, $11, $12, $13, $14, $15, $16, $17,
     $18, $19{as_json}, $20)";

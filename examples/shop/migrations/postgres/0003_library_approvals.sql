-- Approvals live in toolwright's ledger (`toolwright_approvals`, created by
-- `PostgresLedger::connect`); the shop's own table, which SQLite's 0001 made
-- and this version drops there, never existed here.

-- Four eyes: a manager cannot approve their own request, so tenant 1 gets a
-- second manager to approve bob's.
INSERT INTO actors (name, tenant, manager) VALUES ('dave', 1, 1) ON CONFLICT DO NOTHING;

-- Approvals now live in toolwright's ledger (`toolwright_approvals`, created
-- by `SqliteLedger::connect`), so the shop's own table goes.
DROP TABLE approvals;

-- Four eyes: a manager cannot approve their own request, so tenant 1 gets a
-- second manager to approve bob's.
INSERT INTO actors (name, tenant, manager) VALUES ('dave', 1, 1);

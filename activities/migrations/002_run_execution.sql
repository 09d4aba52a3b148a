-- The Temporal execution (run id) that owns a ledger run: a workflow id reused by a later
-- execution must not read or overwrite the rows of the earlier one.
ALTER TABLE research.runs ADD COLUMN execution_id text;

-- 024_run_lanes: the lanes a run entered, in order ('fixed', 'agent'), and why it left the fixed
-- lane for the agent ('' when it did not), set when its report is saved (`workflows.lanes`).
-- A run from before lanes keeps '{}' and ''.

ALTER TABLE research.runs
    ADD COLUMN lanes      text[] NOT NULL DEFAULT '{}',
    ADD COLUMN escalation text   NOT NULL DEFAULT '';

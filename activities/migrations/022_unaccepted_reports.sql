-- 022_unaccepted_reports: a report that was not accepted stays honest.
--
-- When a run ends without a completed report, the host composes one from the recorded evidence:
-- the claims the model wrote when it recorded each quote are its notes (never findings: no
-- verifier judged them), and the model's last submitted report is kept, marked "submitted, not
-- accepted", with the gaps that stopped it.

ALTER TABLE research.reports
    ADD COLUMN notes     jsonb NOT NULL DEFAULT '[]',  -- [{evidence_id, question_id, claim}]
    ADD COLUMN submitted jsonb;  -- {answer, findings, limitations, gaps}, or NULL

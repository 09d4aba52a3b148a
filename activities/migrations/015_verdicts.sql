-- 015_verdicts: the independent check of meaning (workflows/verification.py).
--
-- Once the deterministic gate passes a submission, the `verify` activity asks a verifier model
-- about each claim (the answer is claim 0, the findings 1, 2, ...) with only its sub-questions and
-- cited quotes. One row per claim and finish step: what the verifier said, the verdict the host
-- kept (a "supported" without a sentence copied from a cited quote is kept as not_supported), the
-- sentence, the reason, which model and what it cost. A retried activity finds its rows and asks
-- again only about the claims without one. The report keeps how its meaning was checked.

CREATE TABLE research.verdicts (
    run_id        text NOT NULL,
    execution_id  text NOT NULL,
    step          integer NOT NULL,  -- the finish_research step the claims were submitted in
    claim_no      integer NOT NULL CHECK (claim_no >= 0),  -- 0: the answer
    claim         text NOT NULL,
    verdict       text NOT NULL
        CHECK (verdict IN ('supported', 'partly', 'not_supported', 'contradicted')),
    said          text NOT NULL
        CHECK (said IN ('supported', 'partly', 'not_supported', 'contradicted')),
    sentence      text NOT NULL DEFAULT '',
    evidence_id   text NOT NULL DEFAULT '',  -- the cited quote the sentence was found in
    reason        text NOT NULL DEFAULT '',
    provider      text NOT NULL,
    model         text NOT NULL,
    input_tokens  integer NOT NULL CHECK (input_tokens >= 0),
    output_tokens integer NOT NULL CHECK (output_tokens >= 0),
    estimated     boolean NOT NULL DEFAULT false,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, execution_id, step, claim_no),
    CONSTRAINT verdicts_execution_fk FOREIGN KEY (run_id, execution_id)
        REFERENCES research.executions (run_id, execution_id)
);

-- {"mode": "model" | "off" | "deterministic" | "", "verifier": "openai gpt-4o-mini",
--  "verdicts": [...]}: how the saved report's meaning was checked (NULL before this migration).
ALTER TABLE research.reports ADD COLUMN verification jsonb;

-- 021_judged_verdicts: the verifier judges meaning (workflows/verification.py, workflows/rules.py).
--
-- Evidence keeps the whole sentence(s) of the stored page its quote was cut from and the section
-- heading it sits under (what the verifier and the report show), and the judgement rules' doubts
-- about it when a verifier will judge them at finish instead of the record being refused.
-- A verdict says what it judged: the answer, a finding, the limitations, or whether the evidence
-- cited for a required question answers it (`coverage`, with the question's id).

ALTER TABLE research.evidence
    ADD COLUMN sentence text NOT NULL DEFAULT '',
    ADD COLUMN section  text NOT NULL DEFAULT '',
    ADD COLUMN concerns text[] NOT NULL DEFAULT '{}';

ALTER TABLE research.verdicts
    ADD COLUMN subject text NOT NULL DEFAULT 'finding'
        CHECK (subject IN ('answer', 'finding', 'limitations', 'coverage')),
    ADD COLUMN question_id text NOT NULL DEFAULT '';

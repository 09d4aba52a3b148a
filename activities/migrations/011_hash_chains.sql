-- 011_hash_chains: tamper evidence for each run's steps and evidence.
--
-- Every step row and every evidence row carries `chain`: the SHA-256 of the previous row's chain
-- (per run and execution, in step or evidence-number order; '' before the first) and the row's
-- canonical encoding (activities/ledger/chain.py; the execution id is left out, so the prefix a
-- reset copies keeps its hashes). The report records both chains' last hash when it is saved, so
-- a row deleted from the end shows too. `research audit` recomputes the chains. Rows written
-- before this migration have no chain (NULL) and are not checked.

ALTER TABLE research.steps ADD COLUMN chain text;
ALTER TABLE research.evidence ADD COLUMN chain text;
ALTER TABLE research.reports ADD COLUMN steps_chain text;
ALTER TABLE research.reports ADD COLUMN evidence_chain text;

-- 010_executions: each Temporal execution of a run keeps its own rows.
--
-- A reset ("replay from here" in the Web UI, `temporal workflow reset`) starts a new execution of
-- the same workflow id from an earlier point of its history. Its rows must not meet the old
-- execution's under ON CONFLICT DO NOTHING: every run-scoped row now carries the execution (the
-- Temporal run id) that wrote it, keys include it, and research.executions records each one, with
-- the execution it was forked from and where. runs.execution_id names the current execution: the
-- one status, report, audit, export and the views read. Old executions' rows stay, for audit.
-- Sources and evidence also carry the step that stored them, so a fork can copy what precedes
-- the reset point.

CREATE TABLE research.executions (
    run_id              text NOT NULL,
    execution_id        text NOT NULL,  -- the Temporal run id ('' for runs started without one)
    parent_execution_id text,           -- the execution it was reset from (NULL: the first)
    fork_turn           integer,        -- model turns copied from the parent (turn <= fork_turn)
    fork_step           integer,        -- steps copied from the parent (step <= fork_step)
    fork_work           integer,        -- searches, sources, evidence copied (step <= fork_work)
    started_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, execution_id),
    CONSTRAINT executions_run_fk FOREIGN KEY (run_id) REFERENCES research.runs (run_id)
);

UPDATE research.runs SET execution_id = '' WHERE execution_id IS NULL;
ALTER TABLE research.runs
    ALTER COLUMN execution_id SET DEFAULT '',
    ALTER COLUMN execution_id SET NOT NULL;

INSERT INTO research.executions (run_id, execution_id, started_at)
SELECT run_id, execution_id, started_at FROM research.runs;

-- Views read the rows of the current execution (recreated at the end).
DROP VIEW research.run_summary;
DROP VIEW research.evidence_trace;
DROP VIEW research.cited_evidence;

-- Foreign keys between run-scoped tables first: they hang on the keys replaced below.
ALTER TABLE research.search_results DROP CONSTRAINT search_results_run_id_step_fkey;
ALTER TABLE research.passages DROP CONSTRAINT passages_run_id_source_id_fkey;
ALTER TABLE research.evidence DROP CONSTRAINT evidence_source_fk;
ALTER TABLE research.evidence DROP CONSTRAINT evidence_passage_fk;
DROP INDEX research.evidence_by_source;

ALTER TABLE research.model_calls ADD COLUMN execution_id text;
ALTER TABLE research.steps ADD COLUMN execution_id text;
ALTER TABLE research.searches ADD COLUMN execution_id text;
ALTER TABLE research.search_results ADD COLUMN execution_id text;
ALTER TABLE research.sources ADD COLUMN execution_id text;
ALTER TABLE research.passages ADD COLUMN execution_id text;
ALTER TABLE research.evidence ADD COLUMN execution_id text;
ALTER TABLE research.reports ADD COLUMN execution_id text;
ALTER TABLE research.sources ADD COLUMN step integer;
ALTER TABLE research.evidence ADD COLUMN step integer;

UPDATE research.model_calls t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.steps t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.searches t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.search_results t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.sources t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.passages t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.evidence t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;
UPDATE research.reports t SET execution_id = r.execution_id FROM research.runs r WHERE r.run_id = t.run_id;

-- Rows written before this migration: the step that stored a source or a quote is the first step
-- recorded after it (its step row is written once the tool's work is done).
UPDATE research.sources s SET step = (
    SELECT min(st.step) FROM research.steps st
    WHERE st.run_id = s.run_id AND st.recorded_at >= s.fetched_at);
UPDATE research.evidence e SET step = (
    SELECT min(st.step) FROM research.steps st
    WHERE st.run_id = e.run_id AND st.recorded_at >= e.recorded_at);

ALTER TABLE research.model_calls ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.steps ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.searches ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.search_results ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.sources ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.passages ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.evidence ALTER COLUMN execution_id SET NOT NULL;
ALTER TABLE research.reports ALTER COLUMN execution_id SET NOT NULL;

ALTER TABLE research.model_calls DROP CONSTRAINT model_calls_pkey,
    ADD PRIMARY KEY (run_id, execution_id, turn);
ALTER TABLE research.steps DROP CONSTRAINT steps_pkey,
    ADD PRIMARY KEY (run_id, execution_id, step);
ALTER TABLE research.searches DROP CONSTRAINT searches_pkey,
    ADD PRIMARY KEY (run_id, execution_id, step);
ALTER TABLE research.search_results DROP CONSTRAINT search_results_pkey,
    ADD PRIMARY KEY (run_id, execution_id, step, rank),
    ADD FOREIGN KEY (run_id, execution_id, step)
        REFERENCES research.searches (run_id, execution_id, step);
ALTER TABLE research.sources DROP CONSTRAINT sources_pkey,
    DROP CONSTRAINT sources_run_id_url_key,
    ADD PRIMARY KEY (run_id, execution_id, source_id),
    ADD UNIQUE (run_id, execution_id, url);
ALTER TABLE research.passages DROP CONSTRAINT passages_pkey,
    DROP CONSTRAINT passages_run_id_source_id_passage_id_key,
    ADD PRIMARY KEY (run_id, execution_id, source_id, passage_no),
    ADD UNIQUE (run_id, execution_id, source_id, passage_id),
    ADD FOREIGN KEY (run_id, execution_id, source_id)
        REFERENCES research.sources (run_id, execution_id, source_id);
ALTER TABLE research.evidence DROP CONSTRAINT evidence_pkey,
    ADD PRIMARY KEY (run_id, execution_id, evidence_id),
    ADD CONSTRAINT evidence_source_fk FOREIGN KEY (run_id, execution_id, source_id)
        REFERENCES research.sources (run_id, execution_id, source_id),
    ADD CONSTRAINT evidence_passage_fk FOREIGN KEY (run_id, execution_id, source_id, passage_id)
        REFERENCES research.passages (run_id, execution_id, source_id, passage_id);
ALTER TABLE research.reports DROP CONSTRAINT reports_pkey,
    ADD PRIMARY KEY (run_id, execution_id);
CREATE INDEX evidence_by_source ON research.evidence (run_id, execution_id, source_id);

-- Every run-scoped row belongs to a recorded execution of its run.
ALTER TABLE research.model_calls ADD CONSTRAINT model_calls_execution_fk
    FOREIGN KEY (run_id, execution_id) REFERENCES research.executions (run_id, execution_id);
ALTER TABLE research.steps ADD CONSTRAINT steps_execution_fk
    FOREIGN KEY (run_id, execution_id) REFERENCES research.executions (run_id, execution_id);
ALTER TABLE research.searches ADD CONSTRAINT searches_execution_fk
    FOREIGN KEY (run_id, execution_id) REFERENCES research.executions (run_id, execution_id);
ALTER TABLE research.sources ADD CONSTRAINT sources_execution_fk
    FOREIGN KEY (run_id, execution_id) REFERENCES research.executions (run_id, execution_id);
ALTER TABLE research.evidence ADD CONSTRAINT evidence_execution_fk
    FOREIGN KEY (run_id, execution_id) REFERENCES research.executions (run_id, execution_id);
ALTER TABLE research.reports ADD CONSTRAINT reports_execution_fk
    FOREIGN KEY (run_id, execution_id) REFERENCES research.executions (run_id, execution_id);

-- A row inserted by hand without its execution belongs to the run's current one.
CREATE FUNCTION research.current_execution_by_default() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.execution_id IS NULL THEN
        SELECT r.execution_id INTO NEW.execution_id FROM research.runs r WHERE r.run_id = NEW.run_id;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER model_calls_execution BEFORE INSERT ON research.model_calls
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER steps_execution BEFORE INSERT ON research.steps
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER searches_execution BEFORE INSERT ON research.searches
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER search_results_execution BEFORE INSERT ON research.search_results
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER sources_execution BEFORE INSERT ON research.sources
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER passages_execution BEFORE INSERT ON research.passages
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER evidence_execution BEFORE INSERT ON research.evidence
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();
CREATE TRIGGER reports_execution BEFORE INSERT ON research.reports
    FOR EACH ROW EXECUTE FUNCTION research.current_execution_by_default();

-- The views of 001 and 009, over the current execution's rows (execution_id added at the end).
CREATE VIEW research.cited_evidence AS
SELECT r.run_id,
       f.finding_no,
       f.finding ->> 'text' AS finding,
       e.evidence_id,
       e.question_id,
       e.stance,
       e.claim,
       e.quote,
       e.passage_id,
       e.start_offset,
       e.end_offset,
       s.source_id,
       s.url,
       s.final_url,
       s.content_hash,
       r.execution_id
FROM research.reports r
JOIN research.runs run ON run.run_id = r.run_id AND run.execution_id = r.execution_id
CROSS JOIN LATERAL jsonb_array_elements(r.findings) WITH ORDINALITY AS f (finding, finding_no)
CROSS JOIN LATERAL jsonb_array_elements_text(f.finding -> 'evidence_ids') AS cited (evidence_id)
JOIN research.evidence e
  ON e.run_id = r.run_id AND e.execution_id = r.execution_id
 AND e.evidence_id = cited.evidence_id
JOIN research.sources s
  ON s.run_id = e.run_id AND s.execution_id = e.execution_id AND s.source_id = e.source_id;

CREATE VIEW research.evidence_trace AS
SELECT e.run_id,
       e.evidence_id,
       e.question_id,
       (SELECT q ->> 'text'
        FROM jsonb_array_elements(r.brief -> 'questions') AS q
        WHERE q ->> 'id' = e.question_id) AS question,
       e.stance,
       e.claim,
       e.quote,
       e.passage_id,
       p.section,
       e.start_offset,
       e.end_offset,
       substr(s.snapshot, e.start_offset + 1, e.end_offset - e.start_offset) = e.quote
           AS quote_matches_snapshot,
       s.source_id,
       s.url,
       coalesce(nullif(s.final_url, ''), s.url) AS read_from,
       s.title,
       s.content_hash,
       coalesce(cited.findings, '{}') AS cited_by_findings,
       cited.findings IS NOT NULL AS cited,
       s.fetched_at,
       e.recorded_at,
       e.execution_id
FROM research.evidence e
JOIN research.runs r ON r.run_id = e.run_id AND r.execution_id = e.execution_id
JOIN research.sources s
  ON s.run_id = e.run_id AND s.execution_id = e.execution_id AND s.source_id = e.source_id
LEFT JOIN research.passages p
       ON p.run_id = e.run_id AND p.execution_id = e.execution_id
      AND p.source_id = e.source_id AND p.passage_id = e.passage_id
LEFT JOIN LATERAL (
    SELECT array_agg(f.finding_no::integer ORDER BY f.finding_no) AS findings
    FROM research.reports rep
    CROSS JOIN LATERAL jsonb_array_elements(rep.findings) WITH ORDINALITY AS f (finding, finding_no)
    WHERE rep.run_id = e.run_id AND rep.execution_id = e.execution_id
      AND f.finding -> 'evidence_ids' ? e.evidence_id
) AS cited ON true;

CREATE VIEW research.run_summary AS
SELECT r.run_id,
       r.question,
       r.status,
       r.stop_reason,
       (r.counters ->> 'steps')::integer AS steps,
       (r.counters ->> 'searches')::integer AS searches,
       (r.counters ->> 'page_fetches')::integer AS page_fetches,
       (r.counters ->> 'tokens')::integer AS tokens,
       (r.counters ->> 'model_calls')::integer AS model_calls,
       (r.counters ->> 'finish_attempts')::integer AS finish_attempts,
       (SELECT count(*) FROM research.steps st
        WHERE st.run_id = r.run_id AND st.execution_id = r.execution_id AND NOT st.ok)
           AS refused_steps,
       (SELECT count(*) FROM research.sources s
        WHERE s.run_id = r.run_id AND s.execution_id = r.execution_id AND s.status = 'ok')
           AS sources_read,
       (SELECT count(*) FROM research.sources s
        WHERE s.run_id = r.run_id AND s.execution_id = r.execution_id AND s.status <> 'ok')
           AS sources_failed,
       (SELECT count(*) FROM research.evidence e
        WHERE e.run_id = r.run_id AND e.execution_id = r.execution_id) AS evidence,
       (SELECT count(DISTINCT cited.evidence_id)
        FROM research.cited_evidence cited WHERE cited.run_id = r.run_id) AS cited_evidence,
       rep.composed AS report_composed,
       coalesce(rep.open_questions, '[]') AS open_questions,
       r.started_at,
       r.finished_at,
       r.finished_at - r.started_at AS duration,
       r.execution_id,
       (SELECT count(*) FROM research.executions x WHERE x.run_id = r.run_id) AS executions
FROM research.runs r
LEFT JOIN research.reports rep ON rep.run_id = r.run_id AND rep.execution_id = r.execution_id;

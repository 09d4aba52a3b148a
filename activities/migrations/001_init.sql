-- 001_init: the research ledger and the local search corpus.
--
-- Keys are natural (run_id is the workflow ID; steps, turns and the S/P/E ids are assigned by the
-- workflow), and writers use INSERT ... ON CONFLICT, so a retried activity adds nothing.
-- Run-scoped tables reference research.runs through a constraint named <table>_run_fk.

CREATE TABLE research.runs (
    run_id      text PRIMARY KEY,
    question    text NOT NULL,
    brief       jsonb NOT NULL,
    status      text NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'completed', 'incomplete', 'cancelled', 'failed')),
    stop_reason text,
    counters    jsonb NOT NULL DEFAULT '{}',
    started_at  timestamptz NOT NULL,
    finished_at timestamptz,
    version     integer NOT NULL DEFAULT 1  -- bumped by every update (optimistic concurrency)
);

CREATE TABLE research.model_calls (
    run_id           text NOT NULL,
    turn             integer NOT NULL CHECK (turn >= 1),
    provider         text NOT NULL,
    model            text NOT NULL DEFAULT '',
    input_tokens     integer NOT NULL DEFAULT 0,
    output_tokens    integer NOT NULL DEFAULT 0,
    reasoning_tokens integer NOT NULL DEFAULT 0,
    estimated        boolean NOT NULL DEFAULT false,  -- true when the provider reported no usage
    context_chars    integer NOT NULL DEFAULT 0,
    tool_calls       jsonb NOT NULL DEFAULT '[]',      -- [{id, name, arguments}] as the model emitted
    text             text NOT NULL DEFAULT '',
    recorded_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, turn),
    CONSTRAINT model_calls_run_fk FOREIGN KEY (run_id) REFERENCES research.runs (run_id)
);

CREATE TABLE research.steps (
    run_id       text NOT NULL,
    step         integer NOT NULL CHECK (step >= 1),
    turn         integer NOT NULL,
    tool         text NOT NULL,
    arguments    text NOT NULL DEFAULT '',  -- raw, as emitted: it may not even be valid JSON
    ok           boolean NOT NULL,
    error        text,
    insufficient boolean NOT NULL DEFAULT false,
    summary      text NOT NULL DEFAULT '',
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, step),
    CONSTRAINT steps_run_fk FOREIGN KEY (run_id) REFERENCES research.runs (run_id)
);

CREATE TABLE research.searches (
    run_id      text NOT NULL,
    step        integer NOT NULL,
    query       text NOT NULL,
    provider    text NOT NULL,
    searched_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, step),
    CONSTRAINT searches_run_fk FOREIGN KEY (run_id) REFERENCES research.runs (run_id)
);

CREATE TABLE research.search_results (
    run_id  text NOT NULL,
    step    integer NOT NULL,
    rank    integer NOT NULL CHECK (rank >= 1),
    url     text NOT NULL,
    host    text NOT NULL DEFAULT '',
    title   text NOT NULL DEFAULT '',
    snippet text NOT NULL DEFAULT '',  -- for discovery only: never evidence
    PRIMARY KEY (run_id, step, rank),
    FOREIGN KEY (run_id, step) REFERENCES research.searches (run_id, step)
);

CREATE TABLE research.sources (
    run_id       text NOT NULL,
    source_id    text NOT NULL,  -- "S1"
    url          text NOT NULL,  -- as requested
    final_url    text NOT NULL DEFAULT '',
    host         text NOT NULL DEFAULT '',
    title        text NOT NULL DEFAULT '',
    content_type text NOT NULL DEFAULT '',
    http_status  integer,
    content_hash text,
    snapshot     text,  -- the bounded extracted text that every quote and passage points into
    truncated    boolean NOT NULL DEFAULT false,
    status       text NOT NULL CHECK (status IN ('ok', 'failed', 'refused')),
    error        text,
    fetched_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, source_id),
    UNIQUE (run_id, url),
    CONSTRAINT sources_snapshot_when_ok
        CHECK ((status = 'ok') = (snapshot IS NOT NULL AND content_hash IS NOT NULL)),
    CONSTRAINT sources_run_fk FOREIGN KEY (run_id) REFERENCES research.runs (run_id)
);

CREATE TABLE research.passages (
    run_id       text NOT NULL,
    source_id    text NOT NULL,
    passage_no   integer NOT NULL CHECK (passage_no >= 1),
    passage_id   text NOT NULL,  -- "S1.P4"
    start_offset integer NOT NULL,
    end_offset   integer NOT NULL,
    section      text NOT NULL DEFAULT '',
    text         text NOT NULL,  -- = substring of the snapshot at [start_offset, end_offset)
    PRIMARY KEY (run_id, source_id, passage_no),
    UNIQUE (run_id, source_id, passage_id),
    CHECK (passage_id = source_id || '.P' || passage_no),
    CHECK (0 <= start_offset AND start_offset <= end_offset),
    FOREIGN KEY (run_id, source_id) REFERENCES research.sources (run_id, source_id)
);

CREATE TABLE research.evidence (
    run_id       text NOT NULL,
    evidence_id  text NOT NULL,  -- "E001"
    question_id  text NOT NULL,
    source_id    text NOT NULL,
    claim        text NOT NULL,
    stance       text NOT NULL CHECK (stance IN ('supports', 'contradicts')),
    quote        text NOT NULL,  -- = substring of the source snapshot at [start_offset, end_offset)
    passage_id   text,           -- the passage the quote starts in
    start_offset integer NOT NULL,
    end_offset   integer NOT NULL,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, evidence_id),
    CHECK (0 <= start_offset AND start_offset <= end_offset),
    CONSTRAINT evidence_source_fk
        FOREIGN KEY (run_id, source_id) REFERENCES research.sources (run_id, source_id),
    CONSTRAINT evidence_passage_fk
        FOREIGN KEY (run_id, source_id, passage_id)
        REFERENCES research.passages (run_id, source_id, passage_id)
);

CREATE INDEX evidence_by_source ON research.evidence (run_id, source_id);

CREATE TABLE research.reports (
    run_id         text PRIMARY KEY,
    status         text NOT NULL,
    stop_reason    text NOT NULL,
    answer         text NOT NULL,
    findings       jsonb NOT NULL DEFAULT '[]',  -- [{text, evidence_ids}]
    limitations    text NOT NULL DEFAULT '',
    open_questions jsonb NOT NULL DEFAULT '[]',
    composed       boolean NOT NULL DEFAULT false,
    markdown       text NOT NULL DEFAULT '',
    saved_at       timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT reports_run_fk FOREIGN KEY (run_id) REFERENCES research.runs (run_id)
);

-- One row per (finding, cited evidence): finding -> evidence -> passage -> source URL.
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
       s.content_hash
FROM research.reports r
CROSS JOIN LATERAL jsonb_array_elements(r.findings) WITH ORDINALITY AS f (finding, finding_no)
CROSS JOIN LATERAL jsonb_array_elements_text(f.finding -> 'evidence_ids') AS cited (evidence_id)
JOIN research.evidence e ON e.run_id = r.run_id AND e.evidence_id = cited.evidence_id
JOIN research.sources s ON s.run_id = e.run_id AND s.source_id = e.source_id;

-- The local corpus searched by the `corpus` provider (not run-scoped).
CREATE TABLE research.corpus_documents (
    url        text PRIMARY KEY,
    host       text NOT NULL,
    title      text NOT NULL DEFAULT '',
    body       text NOT NULL,
    tsv        tsvector GENERATED ALWAYS AS
               (to_tsvector('english', coalesce(title, '') || ' ' || body)) STORED,
    indexed_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX corpus_documents_tsv ON research.corpus_documents USING gin (tsv);
CREATE INDEX corpus_documents_host ON research.corpus_documents (host);

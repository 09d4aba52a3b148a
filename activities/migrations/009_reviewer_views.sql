-- 009_reviewer_views: what a reviewer reads with SQL alone.
--
-- research.evidence_trace: one row per piece of evidence, with the question it was filed under,
-- the exact quote and where it sits (passage, section, offsets), the page it came from (URL after
-- redirects, title, content hash), whether the quote is still its snapshot's text at its offsets,
-- and which findings of the report cite it.
-- research.run_summary: one row per run, its outcome, final counters and row counts.

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
       e.recorded_at
FROM research.evidence e
JOIN research.runs r ON r.run_id = e.run_id
JOIN research.sources s ON s.run_id = e.run_id AND s.source_id = e.source_id
LEFT JOIN research.passages p
       ON p.run_id = e.run_id AND p.source_id = e.source_id AND p.passage_id = e.passage_id
LEFT JOIN LATERAL (
    SELECT array_agg(f.finding_no::integer ORDER BY f.finding_no) AS findings
    FROM research.reports rep
    CROSS JOIN LATERAL jsonb_array_elements(rep.findings) WITH ORDINALITY AS f (finding, finding_no)
    WHERE rep.run_id = e.run_id AND f.finding -> 'evidence_ids' ? e.evidence_id
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
       (SELECT count(*) FROM research.steps st WHERE st.run_id = r.run_id AND NOT st.ok)
           AS refused_steps,
       (SELECT count(*) FROM research.sources s WHERE s.run_id = r.run_id AND s.status = 'ok')
           AS sources_read,
       (SELECT count(*) FROM research.sources s WHERE s.run_id = r.run_id AND s.status <> 'ok')
           AS sources_failed,
       (SELECT count(*) FROM research.evidence e WHERE e.run_id = r.run_id) AS evidence,
       (SELECT count(DISTINCT cited.evidence_id)
        FROM research.cited_evidence cited WHERE cited.run_id = r.run_id) AS cited_evidence,
       rep.composed AS report_composed,
       coalesce(rep.open_questions, '[]') AS open_questions,
       r.started_at,
       r.finished_at,
       r.finished_at - r.started_at AS duration
FROM research.runs r
LEFT JOIN research.reports rep ON rep.run_id = r.run_id;

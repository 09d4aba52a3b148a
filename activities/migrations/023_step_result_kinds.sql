-- 023_step_result_kinds: every stored tool result names its kind.
--
-- A step's transcript entry (steps.entry, since 007) holds its tool's result, read back by its
-- `kind` alone (the registry's union of result models, `workflows.transcript`). Results stored
-- before results had a kind get the kind of their tool's one result model (finish_research's:
-- gate_passed when it passed, else gate_failed). The hash chains are unchanged: they encode an
-- entry without the fields at their defaults (`activities.ledger.chain.entry_fields`), and a
-- result's kind is its model's default.
UPDATE research.steps
SET entry = jsonb_set(
    entry,
    '{result,data,kind}',
    to_jsonb(CASE entry -> 'call' ->> 'name'
        WHEN 'search_web' THEN 'search_results'
        WHEN 'read_page' THEN 'page_window'
        WHEN 'record_evidence' THEN 'evidence'
        WHEN 'finish_research' THEN
            CASE WHEN entry -> 'result' -> 'data' ? 'passed' THEN 'gate_passed' ELSE 'gate_failed' END
    END::text)
)
WHERE jsonb_typeof(entry -> 'result' -> 'data') = 'object'
  AND NOT (entry -> 'result' -> 'data') ? 'kind'
  AND entry -> 'call' ->> 'name' IN ('search_web', 'read_page', 'record_evidence', 'finish_research');

"""Ledger SQL for readers: the list of recent runs, and one run's rows whole (every table).

What `research runs`, `report --json`, `export` and `audit` read. Rows come back as the pydantic
models below, one per table, so they serialise to JSON as they are and read back from an export.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from activities.ledger import verdicts as ledger_verdicts
from activities.ledger.base import Connection, fetch_all, fetch_one
from activities.ledger.runs import decision_from, usage_from
from workflows.models import Brief, Counters, Decision, Evidence, Report, RunStatus, ToolCall, Usage
from workflows.transcript import TranscriptEntry
from workflows.verification import Verdict, VerdictWord, Verification


class RunListing(BaseModel):
    """One line of `research runs`."""

    run_id: str
    question: str
    status: RunStatus
    stop_reason: str | None = None
    counters: Counters
    evidence: int
    started_at: datetime
    finished_at: datetime | None = None


class RunRow(BaseModel):
    run_id: str
    question: str
    brief: Brief
    status: RunStatus
    stop_reason: str | None = None
    counters: Counters
    started_at: datetime
    finished_at: datetime | None = None
    execution_id: str | None = None
    version: int = 1
    lanes: list[str] = Field(default_factory=list)  # the lanes it entered (an ended run)
    escalation: str = ""  # why it left the fixed lane


class ModelCallRow(BaseModel):
    turn: int
    provider: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    estimated: bool = False
    usage_note: str = ""
    context_chars: int = 0
    tool_calls: list[ToolCall] = Field(default_factory=list)
    text: str = ""
    recorded_at: datetime

    def decision(self) -> Decision:
        """The model turn as `decide` returned it."""
        return decision_from(self.model_dump())

    def usage(self) -> Usage:
        return usage_from(self.model_dump())


class StepRow(BaseModel):
    step: int
    turn: int
    tool: str
    arguments: str = ""
    ok: bool
    error: str | None = None
    insufficient: bool = False
    summary: str = ""
    entry: TranscriptEntry | None = None  # runs since transcript-in-ledger-1
    recorded_at: datetime
    chain: str | None = None  # the step's link in the run's hash chain (since migration 011)


class SearchResultRow(BaseModel):
    rank: int
    url: str
    host: str = ""
    title: str = ""
    snippet: str = ""


class SearchRow(BaseModel):
    step: int
    query: str
    provider: str
    searched_at: datetime
    results: list[SearchResultRow] = Field(default_factory=list)


class SourceRow(BaseModel):
    source_id: str
    url: str
    final_url: str = ""
    host: str = ""
    title: str = ""
    content_type: str = ""
    http_status: int | None = None
    content_hash: str | None = None
    snapshot: str | None = None
    truncated: bool = False
    status: str
    error: str | None = None
    fetched_at: datetime
    sketch: list[int] = Field(default_factory=list)  # `workflows.families`; none before 019


class PassageRow(BaseModel):
    source_id: str
    passage_no: int
    passage_id: str
    start: int
    end: int
    section: str = ""
    text: str


class EvidenceRow(Evidence):
    recorded_at: datetime
    step: int | None = None  # the step that recorded it (since migration 010)
    chain: str | None = None  # its link in the run's evidence hash chain (since migration 011)


class VerdictRow(BaseModel):
    """The verifier's verdict on one claim of the submission at `step` (since migration 015)."""

    step: int
    claim_no: int
    claim: str
    verdict: VerdictWord
    said: VerdictWord
    sentence: str = ""
    evidence_id: str = ""
    reason: str = ""
    provider: str
    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    estimated: bool = False
    recorded_at: datetime
    subject: str = "finding"  # since migration 021
    question_id: str = ""

    def as_verdict(self) -> Verdict:
        return ledger_verdicts.verdict_from(self.model_dump())


class ReportRow(BaseModel):
    status: RunStatus
    stop_reason: str
    report: Report
    markdown: str = ""
    saved_at: datetime
    # The last hash of each chain when the report was saved (since migration 011).
    steps_chain: str | None = None
    evidence_chain: str | None = None
    verification: Verification = Field(default_factory=Verification)  # since migration 015


class RunRows(BaseModel):
    """Everything the ledger holds for one run, each table in its key order."""

    run: RunRow
    model_calls: list[ModelCallRow] = Field(default_factory=list)
    steps: list[StepRow] = Field(default_factory=list)
    searches: list[SearchRow] = Field(default_factory=list)
    sources: list[SourceRow] = Field(default_factory=list)
    passages: list[PassageRow] = Field(default_factory=list)
    evidence: list[EvidenceRow] = Field(default_factory=list)
    verdicts: list[VerdictRow] = Field(default_factory=list)
    report: ReportRow | None = None


# A running run's counters row is written when it ends: until then its steps, searches, model calls
# and tokens are counted from the rows it wrote so far (as its evidence always is).
_SELECT_RECENT = """
SELECT r.run_id, r.question, r.status, r.stop_reason, r.started_at, r.finished_at,
       CASE WHEN r.status = 'running' THEN r.counters || jsonb_build_object(
           'steps', greatest((r.counters ->> 'steps')::bigint,
               (SELECT count(*) FROM research.steps s
                WHERE s.run_id = r.run_id AND s.execution_id = r.execution_id)),
           'searches', greatest((r.counters ->> 'searches')::bigint,
               (SELECT count(*) FROM research.searches s
                WHERE s.run_id = r.run_id AND s.execution_id = r.execution_id)),
           'model_calls', greatest((r.counters ->> 'model_calls')::bigint,
               (SELECT count(*) FROM research.model_calls c
                WHERE c.run_id = r.run_id AND c.execution_id = r.execution_id)),
           'tokens', greatest((r.counters ->> 'tokens')::bigint,
               (SELECT coalesce(sum(greatest(c.input_tokens, 0) + greatest(c.output_tokens, 0)), 0)
                FROM research.model_calls c
                WHERE c.run_id = r.run_id AND c.execution_id = r.execution_id)))
       ELSE r.counters END AS counters,
       (SELECT count(*) FROM research.evidence e
        WHERE e.run_id = r.run_id AND e.execution_id = r.execution_id) AS evidence
FROM research.runs r
WHERE %(status)s::text IS NULL OR r.status = %(status)s::text
ORDER BY r.started_at DESC, r.run_id
LIMIT %(limit)s
"""

_SELECT_RUN = """
SELECT run_id, question, brief, status, stop_reason, counters, started_at, finished_at,
       execution_id, version, lanes, escalation
FROM research.runs WHERE run_id = %s
"""

_SELECT_MODEL_CALLS = """
SELECT turn, provider, model, input_tokens, output_tokens, reasoning_tokens, cached_input_tokens,
       estimated, usage_note, context_chars, tool_calls, text, recorded_at
FROM research.model_calls WHERE run_id = %s AND execution_id = %s ORDER BY turn
"""

_SELECT_STEPS = """
SELECT step, turn, tool, arguments, ok, error, insufficient, summary, entry, recorded_at, chain
FROM research.steps WHERE run_id = %s AND execution_id = %s ORDER BY step
"""

_SELECT_SEARCHES = """
SELECT step, query, provider, searched_at
FROM research.searches WHERE run_id = %s AND execution_id = %s ORDER BY step
"""

_SELECT_SEARCH_RESULTS = """
SELECT step, rank, url, host, title, snippet
FROM research.search_results WHERE run_id = %s AND execution_id = %s ORDER BY step, rank
"""

_SELECT_SOURCES = """
SELECT source_id, url, final_url, host, title, content_type, http_status, content_hash, snapshot,
       truncated, status, error, fetched_at, sketch
FROM research.sources WHERE run_id = %s AND execution_id = %s
ORDER BY length(source_id), source_id
"""

_SELECT_PASSAGES = """
SELECT source_id, passage_no, passage_id, start_offset AS start, end_offset AS end, section, text
FROM research.passages WHERE run_id = %s AND execution_id = %s
ORDER BY length(source_id), source_id, passage_no
"""

_SELECT_EVIDENCE = """
SELECT evidence_id AS id, question_id, source_id, claim, stance, quote, passage_id,
       start_offset AS start, end_offset AS end, recorded_at, step, chain, sentence, section,
       concerns
FROM research.evidence WHERE run_id = %s AND execution_id = %s
ORDER BY length(evidence_id), evidence_id
"""

_SELECT_REPORT = """
SELECT status, stop_reason, answer, findings, limitations, open_questions, composed, markdown,
       saved_at, steps_chain, evidence_chain, verification, notes, submitted
FROM research.reports WHERE run_id = %s AND execution_id = %s
"""


async def load_recent_runs(conn: Connection, status: str | None, limit: int) -> list[RunListing]:
    rows = await fetch_all(conn, _SELECT_RECENT, {"status": status, "limit": limit})
    return [RunListing.model_validate(row) for row in rows]


async def load_run_rows(conn: Connection, run_id: str) -> RunRows | None:
    run = await fetch_one(conn, _SELECT_RUN, (run_id,))
    if run is None:
        return None
    key = (run_id, run["execution_id"])
    calls = await fetch_all(conn, _SELECT_MODEL_CALLS, key)
    sources = await fetch_all(conn, _SELECT_SOURCES, key)
    passages = await fetch_all(conn, _SELECT_PASSAGES, key)
    evidence = await fetch_all(conn, _SELECT_EVIDENCE, key)
    return RunRows(
        run=RunRow.model_validate(run),
        model_calls=[ModelCallRow.model_validate(row) for row in calls],
        steps=await _steps(conn, key),
        searches=await _searches(conn, key),
        sources=[SourceRow.model_validate(row) for row in sources],
        passages=[PassageRow.model_validate(row) for row in passages],
        evidence=[EvidenceRow.model_validate(row) for row in evidence],
        verdicts=[
            VerdictRow.model_validate(row) for row in await ledger_verdicts.load_rows(conn, *key)
        ],
        report=await _report(conn, key),
    )


async def load_steps(conn: Connection, run_id: str) -> list[StepRow]:
    """The step rows of the run's current execution (none for an unknown run)."""
    run = await fetch_one(conn, _SELECT_RUN, (run_id,))
    return [] if run is None else await _steps(conn, (run_id, run["execution_id"]))


async def _steps(conn: Connection, key: tuple[str, str]) -> list[StepRow]:
    return [StepRow.model_validate(row) for row in await fetch_all(conn, _SELECT_STEPS, key)]


async def _searches(conn: Connection, key: tuple[str, str]) -> list[SearchRow]:
    searches = [
        SearchRow.model_validate(row) for row in await fetch_all(conn, _SELECT_SEARCHES, key)
    ]
    by_step = {search.step: search for search in searches}
    for row in await fetch_all(conn, _SELECT_SEARCH_RESULTS, key):
        search = by_step.get(row.pop("step"))
        if search is not None:
            search.results.append(SearchResultRow.model_validate(row))
    return searches


async def _report(conn: Connection, key: tuple[str, str]) -> ReportRow | None:
    row = await fetch_one(conn, _SELECT_REPORT, key)
    if row is None:
        return None
    report = Report.model_validate(
        {name: row[name] for name in ("answer", "findings", "limitations", "open_questions")}
        | {"composed": row["composed"], "notes": row["notes"], "submitted": row["submitted"]}
    )
    return ReportRow(
        status=row["status"],
        stop_reason=row["stop_reason"],
        report=report,
        markdown=row["markdown"],
        saved_at=row["saved_at"],
        steps_chain=row["steps_chain"],
        evidence_chain=row["evidence_chain"],
        verification=Verification.model_validate(row["verification"] or {}),
    )

"""Ledger SQL for runs: the run row, model calls, steps, searches and the final report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from activities.ledger.base import (
    Connection,
    LedgerConflict,
    RunIdTaken,
    UnknownRun,
    execute,
    fetch_all,
    fetch_one,
)
from workflows.contracts import SaveReportInput, StepRecord
from workflows.models import (
    Brief,
    Counters,
    Decision,
    RunStatus,
    SearchHit,
    ToolCall,
    TranscriptEntry,
    Usage,
)

_INSERT_RUN = """
INSERT INTO research.runs (run_id, question, brief, counters, started_at, execution_id)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id) DO NOTHING
"""

_SELECT_EXECUTION = "SELECT execution_id FROM research.runs WHERE run_id = %s"

_SELECT_RUN = """
SELECT run_id, question, status, stop_reason, counters, version, started_at, finished_at
FROM research.runs
WHERE run_id = %s
"""

_INSERT_MODEL_CALL = """
INSERT INTO research.model_calls (
    run_id, turn, provider, model, input_tokens, output_tokens, reasoning_tokens, estimated,
    context_chars, tool_calls, text, usage_note, cached_input_tokens
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, turn) DO NOTHING
"""

_SELECT_MODEL_CALLS = """
SELECT model, input_tokens, output_tokens, reasoning_tokens, estimated, tool_calls, text,
       usage_note, cached_input_tokens
FROM research.model_calls
WHERE run_id = %s
ORDER BY turn
"""

_SELECT_MODEL_CALL = """
SELECT model, input_tokens, output_tokens, reasoning_tokens, estimated, tool_calls, text,
       usage_note, cached_input_tokens
FROM research.model_calls
WHERE run_id = %s AND turn = %s
"""

_INSERT_STEP = """
INSERT INTO research.steps (
    run_id, step, turn, tool, arguments, ok, error, insufficient, summary, entry
) VALUES (
    %(run_id)s, %(step)s, %(turn)s, %(tool)s, %(arguments)s, %(ok)s, %(error)s,
    %(insufficient)s, %(summary)s, %(entry)s
) ON CONFLICT (run_id, step) DO NOTHING
"""
_SELECT_ENTRIES = """
SELECT entry FROM research.steps
WHERE run_id = %s AND step <= %s AND entry IS NOT NULL
ORDER BY step
"""

_INSERT_SEARCH = """
INSERT INTO research.searches (run_id, step, query, provider) VALUES (%s, %s, %s, %s)
ON CONFLICT (run_id, step) DO NOTHING
"""

_INSERT_SEARCH_RESULT = """
INSERT INTO research.search_results (run_id, step, rank, url, host, title, snippet)
VALUES (%s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, step, rank) DO NOTHING
"""

_SELECT_SEARCH = "SELECT provider FROM research.searches WHERE run_id = %s AND step = %s"

_SELECT_SEARCH_RESULTS = """
SELECT url, host, title, snippet
FROM research.search_results
WHERE run_id = %s AND step = %s
ORDER BY rank
"""

_INSERT_REPORT = """
INSERT INTO research.reports (
    run_id, status, stop_reason, answer, findings, limitations, open_questions, composed, markdown
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id) DO NOTHING
"""

# Optimistic: only the version this transaction read may be replaced.
_FINISH_RUN = """
UPDATE research.runs
SET status = %s, stop_reason = %s, counters = %s, finished_at = %s, version = version + 1
WHERE run_id = %s AND version = %s
"""

_SELECT_MARKDOWN = "SELECT markdown FROM research.reports WHERE run_id = %s"


@dataclass(frozen=True)
class RunRecord:
    """The run row: what `research status` can show without Temporal."""

    run_id: str
    question: str
    status: RunStatus
    stop_reason: str | None
    counters: Counters
    version: int
    started_at: datetime
    finished_at: datetime | None


async def insert_run(
    conn: Connection, run_id: str, brief: Brief, started_at: str, execution_id: str
) -> bool:
    """True when the run is new; False when this execution recorded it already (a retry).
    Raises RunIdTaken when another execution owns the run id."""
    params = (
        run_id,
        brief.question,
        Jsonb(brief.model_dump(mode="json")),
        Jsonb(Counters().model_dump()),
        datetime.fromisoformat(started_at),
        execution_id or None,
    )
    if await execute(conn, _INSERT_RUN, params) == 1:
        return True
    row = await fetch_one(conn, _SELECT_EXECUTION, (run_id,))
    owner = row["execution_id"] if row else None
    if execution_id and owner != execution_id:
        raise RunIdTaken(run_id)
    return False


async def load_run(conn: Connection, run_id: str) -> RunRecord | None:
    row = await fetch_one(conn, _SELECT_RUN, (run_id,))
    if row is None:
        return None
    row["status"] = RunStatus(row["status"])
    row["counters"] = Counters.model_validate(row["counters"])
    return RunRecord(**row)


async def insert_model_call(
    conn: Connection, run_id: str, turn: int, decision: Decision, provider: str, context_chars: int
) -> bool:
    usage = decision.usage
    params = (
        run_id, turn, provider, decision.model, usage.input_tokens, usage.output_tokens,
        usage.reasoning_tokens, usage.estimated, context_chars,
        Jsonb([call.model_dump() for call in decision.tool_calls]), decision.text, usage.note,
        usage.cached_input_tokens,
    )  # fmt: skip
    return await execute(conn, _INSERT_MODEL_CALL, params) == 1


async def load_decisions(conn: Connection, run_id: str) -> list[Decision]:
    return [decision_from(row) for row in await fetch_all(conn, _SELECT_MODEL_CALLS, (run_id,))]


async def load_decision(conn: Connection, run_id: str, turn: int) -> Decision | None:
    row = await fetch_one(conn, _SELECT_MODEL_CALL, (run_id, turn))
    return decision_from(row) if row else None


def decision_from(row: Mapping[str, Any]) -> Decision:
    """A `model_calls` row (or the same fields read elsewhere) as the Decision `decide` returned."""
    calls = [ToolCall.model_validate(call) for call in row["tool_calls"]]
    return Decision(tool_calls=calls, text=row["text"], model=row["model"], usage=usage_from(row))


def usage_from(row: Mapping[str, Any]) -> Usage:
    """The usage columns of a `model_calls` row."""
    return Usage(
        input_tokens=row["input_tokens"],
        output_tokens=row["output_tokens"],
        reasoning_tokens=row["reasoning_tokens"],
        estimated=row["estimated"],
        note=row["usage_note"],
        cached_input_tokens=row["cached_input_tokens"],
    )


async def insert_step(conn: Connection, record: StepRecord) -> bool:
    params = record.model_dump(exclude={"entry"})
    params["entry"] = Jsonb(record.entry.model_dump(mode="json")) if record.entry else None
    return await execute(conn, _INSERT_STEP, params) == 1


async def load_entries(conn: Connection, run_id: str, upto: int) -> list[TranscriptEntry]:
    """The recorded steps up to `upto`, as the model is shown them, in order."""
    rows = await fetch_all(conn, _SELECT_ENTRIES, (run_id, upto))
    return [TranscriptEntry.model_validate(row["entry"]) for row in rows]


async def insert_search(
    conn: Connection, run_id: str, step: int, query: str, provider: str, hits: list[SearchHit]
) -> bool:
    """Record the search and its ranked results; False (and nothing written) when recorded."""
    if not await execute(conn, _INSERT_SEARCH, (run_id, step, query, provider)):
        return False
    rows = [
        (run_id, step, rank, hit.url, hit.host, hit.title, hit.snippet)
        for rank, hit in enumerate(hits, start=1)
    ]
    async with conn.cursor() as cursor:
        await cursor.executemany(_INSERT_SEARCH_RESULT, rows)
    return True


async def load_search(
    conn: Connection, run_id: str, step: int
) -> tuple[str, list[SearchHit]] | None:
    search = await fetch_one(conn, _SELECT_SEARCH, (run_id, step))
    if search is None:
        return None
    rows = await fetch_all(conn, _SELECT_SEARCH_RESULTS, (run_id, step))
    return search["provider"], [SearchHit(**row) for row in rows]


async def insert_report(conn: Connection, request: SaveReportInput, markdown: str) -> bool:
    """Insert the report and finish the run row (call inside a transaction); False if saved."""
    run = await fetch_one(conn, _SELECT_RUN, (request.run_id,))
    if run is None:
        raise UnknownRun(request.run_id)
    if not await execute(conn, _INSERT_REPORT, _report_params(request, markdown)):
        return False
    if not await execute(conn, _FINISH_RUN, _finish_params(request, run["version"])):
        raise LedgerConflict(f"run {request.run_id} changed while its report was being saved")
    return True


async def load_markdown(conn: Connection, run_id: str) -> str | None:
    row = await fetch_one(conn, _SELECT_MARKDOWN, (run_id,))
    return None if row is None else str(row["markdown"])


def _report_params(request: SaveReportInput, markdown: str) -> tuple[object, ...]:
    report = request.report
    return (
        request.run_id,
        request.status.value,
        request.stop_reason.value,
        report.answer,
        Jsonb([finding.model_dump() for finding in report.findings]),
        report.limitations,
        Jsonb(list(report.open_questions)),
        report.composed,
        markdown,
    )


def _finish_params(request: SaveReportInput, version: int) -> tuple[object, ...]:
    return (
        request.status.value,
        request.stop_reason.value,
        Jsonb(request.counters.model_dump()),
        datetime.fromisoformat(request.finished_at),
        request.run_id,
        version,
    )

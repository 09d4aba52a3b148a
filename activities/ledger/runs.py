"""Ledger SQL for runs: the run row, model calls, steps, searches and the final report."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from activities.ledger import chain, executions
from activities.ledger.base import (
    Connection,
    LedgerConflict,
    Row,
    RunIdTaken,
    UnknownRun,
    execute,
    fetch_all,
    fetch_one,
)
from workflows.contracts import SaveReportInput, StepRecord
from workflows.models import Brief, Counters, Decision, RunStatus, SearchHit, ToolCall, Usage
from workflows.scope import ForkPoint
from workflows.transcript import TranscriptEntry

_INSERT_RUN = """
INSERT INTO research.runs (run_id, question, brief, counters, started_at, execution_id)
VALUES (%s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id) DO NOTHING
"""

_SELECT_FIRST_EXECUTION = """
SELECT execution_id FROM research.executions
WHERE run_id = %s AND parent_execution_id IS NULL
"""

_SELECT_RUN = """
SELECT run_id, question, status, stop_reason, counters, version, started_at, finished_at, lanes
FROM research.runs
WHERE run_id = %s
"""

_SELECT_RUN_EXECUTION = "SELECT version, execution_id FROM research.runs WHERE run_id = %s"

_INSERT_MODEL_CALL = """
INSERT INTO research.model_calls (
    run_id, execution_id, turn, provider, model, input_tokens, output_tokens, reasoning_tokens,
    estimated, context_chars, tool_calls, text, usage_note, cached_input_tokens
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, execution_id, turn) DO NOTHING
"""

_SELECT_MODEL_CALLS = """
SELECT model, input_tokens, output_tokens, reasoning_tokens, estimated, tool_calls, text,
       usage_note, cached_input_tokens
FROM research.model_calls
WHERE run_id = %s AND execution_id = %s
ORDER BY turn
"""

_SELECT_MODEL_CALL = """
SELECT model, input_tokens, output_tokens, reasoning_tokens, estimated, tool_calls, text,
       usage_note, cached_input_tokens
FROM research.model_calls
WHERE run_id = %s AND execution_id = %s AND turn = %s
"""

_INSERT_STEP = """
INSERT INTO research.steps (
    run_id, execution_id, step, turn, tool, arguments, ok, error, insufficient, summary, entry,
    chain
) VALUES (
    %(run_id)s, %(execution_id)s, %(step)s, %(turn)s, %(tool)s, %(arguments)s, %(ok)s,
    %(error)s, %(insufficient)s, %(summary)s, %(entry)s, %(chain)s
) ON CONFLICT (run_id, execution_id, step) DO NOTHING
"""

# The chain of the step before this one (steps are hash-chained per run and execution).
_SELECT_STEP_CHAIN = """
SELECT chain FROM research.steps
WHERE run_id = %s AND execution_id = %s AND step < %s
ORDER BY step DESC
LIMIT 1
"""

# Each chain's last link, which the report keeps (a row deleted from the end shows).
_SELECT_CHAIN_HEADS = """
SELECT (SELECT chain FROM research.steps
        WHERE run_id = %(run_id)s AND execution_id = %(execution_id)s
        ORDER BY step DESC LIMIT 1) AS steps_chain,
       (SELECT chain FROM research.evidence
        WHERE run_id = %(run_id)s AND execution_id = %(execution_id)s
        ORDER BY length(evidence_id) DESC, evidence_id DESC LIMIT 1) AS evidence_chain
"""

_SELECT_ENTRIES = """
SELECT entry FROM research.steps
WHERE run_id = %s AND execution_id = %s AND step <= %s AND entry IS NOT NULL
ORDER BY step
"""

# The steps up to a watermark, their entries only above `seen` (the steps a reader holds already):
# every row's step number, and the chain of those from `seen` on, let it check what it holds.
_SELECT_ENTRIES_ABOVE = """
SELECT step, CASE WHEN step >= %(seen)s THEN chain END AS chain,
       CASE WHEN step > %(seen)s THEN entry END AS entry
FROM research.steps
WHERE run_id = %(run_id)s AND execution_id = %(execution_id)s AND step <= %(upto)s
  AND entry IS NOT NULL
ORDER BY step
"""

_INSERT_SEARCH = """
INSERT INTO research.searches (run_id, execution_id, step, query, provider)
VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (run_id, execution_id, step) DO NOTHING
"""

_INSERT_SEARCH_RESULT = """
INSERT INTO research.search_results (
    run_id, execution_id, step, rank, url, host, title, snippet
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, execution_id, step, rank) DO NOTHING
"""

_SELECT_SEARCH = """
SELECT provider FROM research.searches WHERE run_id = %s AND execution_id = %s AND step = %s
"""

_SELECT_SEARCH_RESULTS = """
SELECT url, host, title, snippet
FROM research.search_results
WHERE run_id = %s AND execution_id = %s AND step = %s
ORDER BY rank
"""

_INSERT_REPORT = """
INSERT INTO research.reports (
    run_id, execution_id, status, stop_reason, answer, findings, limitations, open_questions,
    composed, markdown, steps_chain, evidence_chain, verification, notes, submitted
) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT (run_id, execution_id) DO NOTHING
"""

# Optimistic: only the version this transaction read may be replaced.
_FINISH_RUN = """
UPDATE research.runs
SET status = %s, stop_reason = %s, counters = %s, finished_at = %s, lanes = %s,
    escalation = %s, version = version + 1
WHERE run_id = %s AND version = %s
"""

_SELECT_MARKDOWN = """
SELECT markdown FROM research.reports WHERE run_id = %s AND execution_id = %s
"""


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
    lanes: list[str] = field(default_factory=list)  # the lanes it entered (once it ended)


async def insert_run(
    conn: Connection,
    run_id: str,
    brief: Brief,
    started_at: str,
    execution_id: str,
    first_execution_id: str = "",
) -> bool:
    """True when the run is new; False when this execution recorded it already (a retry), or
    is a reset of the run to its start (`first_execution_id`, kept by Temporal across resets,
    is the run's first execution): the ledger forks it, keeping no rows. Raises RunIdTaken when
    another workflow execution owns the run id."""
    params = (
        run_id,
        brief.question,
        Jsonb(brief.model_dump(mode="json")),
        Jsonb(Counters().model_dump()),
        datetime.fromisoformat(started_at),
        execution_id,
    )
    if await execute(conn, _INSERT_RUN, params) == 1:
        await executions.record_first(conn, run_id, execution_id)
        return True
    if not execution_id or await executions.is_known(conn, run_id, execution_id):
        return False
    first = await fetch_one(conn, _SELECT_FIRST_EXECUTION, (run_id,))
    if not first_execution_id or first is None or first["execution_id"] != first_execution_id:
        raise RunIdTaken(run_id)
    await executions.enter(conn, run_id, execution_id, ForkPoint(turns=0, steps=0, work=0))
    return False


async def load_run(conn: Connection, run_id: str) -> RunRecord | None:
    row = await fetch_one(conn, _SELECT_RUN, (run_id,))
    if row is None:
        return None
    row["status"] = RunStatus(row["status"])
    row["counters"] = Counters.model_validate(row["counters"])
    return RunRecord(**row)


async def insert_model_call(
    conn: Connection,
    run_id: str,
    execution_id: str,
    turn: int,
    decision: Decision,
    provider: str,
    context_chars: int,
) -> bool:
    usage = decision.usage
    params = (
        run_id, execution_id, turn, provider, decision.model, usage.input_tokens,
        usage.output_tokens, usage.reasoning_tokens, usage.estimated, context_chars,
        Jsonb([call.model_dump() for call in decision.tool_calls]), decision.text, usage.note,
        usage.cached_input_tokens,
    )  # fmt: skip
    return await execute(conn, _INSERT_MODEL_CALL, params) == 1


async def load_decisions(conn: Connection, run_id: str, execution_id: str) -> list[Decision]:
    rows = await fetch_all(conn, _SELECT_MODEL_CALLS, (run_id, execution_id))
    return [decision_from(row) for row in rows]


async def load_decision(
    conn: Connection, run_id: str, execution_id: str, turn: int
) -> Decision | None:
    row = await fetch_one(conn, _SELECT_MODEL_CALL, (run_id, execution_id, turn))
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


async def insert_step(
    conn: Connection, record: StepRecord, execution_id: str, previous: str | None = None
) -> str | None:
    """Insert the step linked into its execution's chain; its chain, or None when the step was
    recorded already. `previous`: the chain of the step right before it, when the caller knows
    it (rows are never changed once written); else it is read."""
    scope = record.scope
    params = record.model_dump(exclude={"entry", "scope"}) | {
        "run_id": scope.run_id,
        "step": scope.step,
        "turn": scope.turn,
        "execution_id": execution_id,
    }
    stored = record.entry.model_dump(mode="json") if record.entry else None
    # Chained as it reads back (a TranscriptEntry again), which is what the audit recomputes.
    entry = None if stored is None else TranscriptEntry.model_validate(stored)
    if previous is None:
        before = await fetch_one(conn, _SELECT_STEP_CHAIN, (scope.run_id, execution_id, scope.step))
        previous = (before or {}).get("chain") or ""
    link = chain.step_link(previous, params | {"entry": chain.entry_fields(entry)})
    params["chain"] = link
    params["entry"] = None if stored is None else Jsonb(stored)
    return link if await execute(conn, _INSERT_STEP, params) == 1 else None


async def load_entries(
    conn: Connection, run_id: str, execution_id: str, upto: int
) -> list[TranscriptEntry]:
    """The recorded steps up to `upto`, as the model is shown them, in order."""
    rows = await fetch_all(conn, _SELECT_ENTRIES, (run_id, execution_id, upto))
    return [TranscriptEntry.model_validate(row["entry"]) for row in rows]


@dataclass(frozen=True)
class HeldTranscript:
    """The steps a reader read of one run's execution: their numbers, in order, the last one's
    chain, and their entries."""

    steps: tuple[int, ...]
    chain: str | None
    entries: tuple[TranscriptEntry, ...]


async def load_entries_after(
    conn: Connection, run_id: str, execution_id: str, upto: int, held: HeldTranscript | None
) -> HeldTranscript:
    """The recorded steps up to `upto`, reading only the entries above those `held` (what this
    reader read before of the same run and execution). Step rows are never changed once written,
    but `held` is used only when the rows up to its last step are the same steps and that step's
    chain (which hashes every row before it) is the same; otherwise every entry is read."""
    params = entries_params(run_id, execution_id, upto, held)
    if params["seen"] >= 0:
        read = held_from(await fetch_all(conn, _SELECT_ENTRIES_ABOVE, params), held)
        if read is not None:
            return read
    params = entries_params(run_id, execution_id, upto, None)
    read = held_from(await fetch_all(conn, _SELECT_ENTRIES_ABOVE, params), None)
    assert read is not None  # nothing held: every row is read
    return read


async def load_turn(
    conn: Connection,
    run_id: str,
    execution_id: str,
    turn: int,
    upto: int,
    held: HeldTranscript | None,
) -> tuple[Decision | None, HeldTranscript]:
    """The decision recorded for `turn` (a retried decide) and the steps up to `upto` (as
    `load_entries_after` reads them), both asked in one round trip (a pipeline)."""
    params = entries_params(run_id, execution_id, upto, held)
    async with (
        conn.pipeline(),
        conn.cursor(row_factory=dict_row) as calls,
        conn.cursor(row_factory=dict_row) as steps,
    ):
        await calls.execute(_SELECT_MODEL_CALL, (run_id, execution_id, turn))
        await steps.execute(_SELECT_ENTRIES_ABOVE, params)
        row = await calls.fetchone()
        rows = await steps.fetchall()
    read = held_from(rows, held if params["seen"] >= 0 else None)
    if read is None:  # the rows do not continue what is held: every entry
        read = await load_entries_after(conn, run_id, execution_id, upto, None)
    return (decision_from(row) if row else None), read


def entries_params(
    run_id: str, execution_id: str, upto: int, held: HeldTranscript | None
) -> dict[str, Any]:
    """The parameters of `SELECT_ENTRIES_ABOVE` for a read up to `upto` given what is `held`:
    `seen` its last step when it may be continued, else -1 (every entry)."""
    usable = held is not None and bool(held.steps) and held.steps[-1] <= upto
    seen = held.steps[-1] if held is not None and usable else -1
    return {"run_id": run_id, "execution_id": execution_id, "upto": upto, "seen": seen}


def held_from(rows: list[Row], held: HeldTranscript | None) -> HeldTranscript | None:
    """What a reader holds after reading `rows` (`SELECT_ENTRIES_ABOVE` with `seen` from
    `entries_params` for `held`); None when the rows do not continue `held` (read every entry)."""
    if held is None or not held.steps:
        return HeldTranscript(
            tuple(row["step"] for row in rows),
            rows[-1]["chain"] if rows else None,
            tuple(TranscriptEntry.model_validate(row["entry"]) for row in rows),
        )
    seen = held.steps[-1]
    before = [row for row in rows if row["step"] <= seen]
    if tuple(row["step"] for row in before) != held.steps or before[-1]["chain"] != held.chain:
        return None
    after = rows[len(before) :]
    entries = held.entries + tuple(TranscriptEntry.model_validate(row["entry"]) for row in after)
    return HeldTranscript(tuple(row["step"] for row in rows), rows[-1]["chain"], entries)


async def insert_search(
    conn: Connection,
    run_id: str,
    execution_id: str,
    step: int,
    query: str,
    provider: str,
    hits: list[SearchHit],
) -> bool:
    """Record the search and its ranked results; False (and nothing written) when recorded."""
    if not await execute(conn, _INSERT_SEARCH, (run_id, execution_id, step, query, provider)):
        return False
    rows = [
        (run_id, execution_id, step, rank, hit.url, hit.host, hit.title, hit.snippet)
        for rank, hit in enumerate(hits, start=1)
    ]
    async with conn.cursor() as cursor:
        await cursor.executemany(_INSERT_SEARCH_RESULT, rows)
    return True


async def load_search(
    conn: Connection, run_id: str, execution_id: str, step: int
) -> tuple[str, list[SearchHit]] | None:
    search = await fetch_one(conn, _SELECT_SEARCH, (run_id, execution_id, step))
    if search is None:
        return None
    rows = await fetch_all(conn, _SELECT_SEARCH_RESULTS, (run_id, execution_id, step))
    return search["provider"], [SearchHit(**row) for row in rows]


async def insert_report(
    conn: Connection, request: SaveReportInput, markdown: str, execution_id: str
) -> bool:
    """Insert the report and finish the run row (call inside a transaction); False if saved.
    The report of an execution a reset replaced is kept; the run row is the current one's."""
    run_id = request.scope.run_id
    run = await fetch_one(conn, _SELECT_RUN_EXECUTION, (run_id,))
    if run is None:
        raise UnknownRun(run_id)
    heads = await fetch_one(
        conn, _SELECT_CHAIN_HEADS, {"run_id": run_id, "execution_id": execution_id}
    )
    checked = request.verification
    params = (
        *_report_params(request, markdown, execution_id),
        *(heads or {"steps_chain": None, "evidence_chain": None}).values(),
        Jsonb(checked.model_dump(mode="json")) if checked.mode else None,
        Jsonb([note.model_dump() for note in request.report.notes]),
        Jsonb(request.report.submitted.model_dump()) if request.report.submitted else None,
    )
    if not await execute(conn, _INSERT_REPORT, params):
        return False
    if run["execution_id"] != execution_id:
        return True
    if not await execute(conn, _FINISH_RUN, _finish_params(request, run["version"])):
        raise LedgerConflict(f"run {run_id} changed while its report was being saved")
    return True


async def load_markdown(conn: Connection, run_id: str, execution_id: str) -> str | None:
    row = await fetch_one(conn, _SELECT_MARKDOWN, (run_id, execution_id))
    return None if row is None else str(row["markdown"])


def _report_params(
    request: SaveReportInput, markdown: str, execution_id: str
) -> tuple[object, ...]:
    report = request.report
    return (
        request.scope.run_id,
        execution_id,
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
        request.lanes,
        request.escalation,
        request.scope.run_id,
        version,
    )

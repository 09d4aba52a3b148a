"""Ledger SQL for executions: each Temporal execution of a run keeps its own rows.

A reset ("replay from here") starts a new execution of the same workflow id from an earlier point
of its history; what came before that point is replayed from history, so the new execution's first
activity may be a decide, a tool or a step record. When an activity of an execution the ledger has
not seen reaches it, the run forks, in one transaction: the current execution's rows that precede
the reset point (`ForkPoint`, from the activity's run scope) are copied under the new execution, the
execution is recorded with its parent, and the run row names it current and running again. A
retried activity finds the execution recorded and forks nothing. The old execution's rows stay
as they were, for audit; an activity it left in flight still writes under its own id.
"""

from __future__ import annotations

from datetime import datetime

from psycopg.types.json import Jsonb
from pydantic import BaseModel

from activities.ledger import verdicts
from activities.ledger.base import Connection, UnknownRun, execute, fetch_all, fetch_one
from workflows.models import Counters
from workflows.scope import ForkPoint


class ExecutionRow(BaseModel):
    """One execution of a run, as `research.executions` records it."""

    execution_id: str
    parent_execution_id: str | None = None
    fork_turn: int | None = None
    fork_step: int | None = None
    fork_work: int | None = None
    started_at: datetime
    current: bool = False


_SELECT_STATE = """
SELECT r.execution_id AS current,
       EXISTS (SELECT 1 FROM research.executions x
               WHERE x.run_id = r.run_id AND x.execution_id = %(execution)s) AS known
FROM research.runs r
WHERE r.run_id = %(run_id)s
"""

_LOCK_RUN = "SELECT execution_id FROM research.runs WHERE run_id = %(run_id)s FOR NO KEY UPDATE"

_INSERT_EXECUTION = """
INSERT INTO research.executions (
    run_id, execution_id, parent_execution_id, fork_turn, fork_step, fork_work
) VALUES (
    %(run_id)s, %(execution)s, %(parent)s, %(turns)s, %(steps)s, %(work)s
) ON CONFLICT DO NOTHING
"""

# The parent's turn of the step the new execution is in, else its last turn.
_TURNS = """
SELECT coalesce(
    (SELECT turn FROM research.steps
     WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step = %(work)s + 1),
    (SELECT max(turn) FROM research.model_calls
     WHERE run_id = %(run_id)s AND execution_id = %(parent)s),
    0) AS turns
"""

# Each run-scoped table's copy: the parent's rows before the fork point, under the new execution.
_COPIES = [
    """
INSERT INTO research.model_calls (
    run_id, execution_id, turn, provider, model, input_tokens, output_tokens, reasoning_tokens,
    estimated, context_chars, tool_calls, text, recorded_at, usage_note, cached_input_tokens)
SELECT run_id, %(execution)s, turn, provider, model, input_tokens, output_tokens,
       reasoning_tokens, estimated, context_chars, tool_calls, text, recorded_at, usage_note,
       cached_input_tokens
FROM research.model_calls
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND turn <= %(turns)s
""",
    """
INSERT INTO research.steps (
    run_id, execution_id, step, turn, tool, arguments, ok, error, insufficient, summary,
    recorded_at, entry, chain)
SELECT run_id, %(execution)s, step, turn, tool, arguments, ok, error, insufficient, summary,
       recorded_at, entry, chain
FROM research.steps
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step <= %(steps)s
""",
    """
INSERT INTO research.searches (run_id, execution_id, step, query, provider, searched_at)
SELECT run_id, %(execution)s, step, query, provider, searched_at
FROM research.searches
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step <= %(work)s
""",
    """
INSERT INTO research.search_results (
    run_id, execution_id, step, rank, url, host, title, snippet)
SELECT run_id, %(execution)s, step, rank, url, host, title, snippet
FROM research.search_results
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step <= %(work)s
""",
    """
INSERT INTO research.sources (
    run_id, execution_id, source_id, url, final_url, host, title, content_type, http_status,
    content_hash, snapshot, truncated, status, error, fetched_at, step, sketch)
SELECT run_id, %(execution)s, source_id, url, final_url, host, title, content_type, http_status,
       content_hash, snapshot, truncated, status, error, fetched_at, step, sketch
FROM research.sources
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step <= %(work)s
""",
    """
INSERT INTO research.passages (
    run_id, execution_id, source_id, passage_no, passage_id, start_offset, end_offset, section,
    text)
SELECT p.run_id, %(execution)s, p.source_id, p.passage_no, p.passage_id, p.start_offset,
       p.end_offset, p.section, p.text
FROM research.passages p
JOIN research.sources s
  ON s.run_id = p.run_id AND s.execution_id = p.execution_id AND s.source_id = p.source_id
WHERE p.run_id = %(run_id)s AND p.execution_id = %(parent)s AND s.step <= %(work)s
""",
    """
INSERT INTO research.evidence (
    run_id, execution_id, evidence_id, question_id, source_id, claim, stance, quote, passage_id,
    start_offset, end_offset, recorded_at, step, chain, sentence, section, concerns)
SELECT run_id, %(execution)s, evidence_id, question_id, source_id, claim, stance, quote,
       passage_id, start_offset, end_offset, recorded_at, step, chain, sentence, section,
       concerns
FROM research.evidence
WHERE run_id = %(run_id)s AND execution_id = %(parent)s AND step <= %(work)s
""",
]

# The new execution is current, and the run is running again (it ends with its own report).
_MAKE_CURRENT = """
UPDATE research.runs
SET execution_id = %(execution)s, status = 'running', stop_reason = NULL, finished_at = NULL,
    counters = %(counters)s, version = version + 1
WHERE run_id = %(run_id)s
"""

_SELECT_EXECUTIONS = """
SELECT x.execution_id, x.parent_execution_id, x.fork_turn, x.fork_step, x.fork_work,
       x.started_at, x.execution_id = r.execution_id AS current
FROM research.executions x
JOIN research.runs r ON r.run_id = x.run_id
WHERE x.run_id = %s
ORDER BY x.started_at, x.execution_id
"""


async def record_first(conn: Connection, run_id: str, execution_id: str) -> None:
    """Record the execution that started the run (call in start_run's transaction)."""
    params = {"run_id": run_id, "execution": execution_id, "parent": None}
    await execute(conn, _INSERT_EXECUTION, params | {"turns": None, "steps": None, "work": None})


async def is_known(conn: Connection, run_id: str, execution_id: str) -> bool:
    """Whether the ledger has seen this execution of the run (UnknownRun: no such run)."""
    row = await fetch_one(conn, _SELECT_STATE, {"run_id": run_id, "execution": execution_id})
    if row is None:
        raise UnknownRun(run_id)
    return bool(row["known"])


async def enter(conn: Connection, run_id: str, execution_id: str, point: ForkPoint) -> bool:
    """Make sure the ledger knows `execution_id` of the run, forking it at `point` from the
    execution the point names (else the current one) when it does not (call inside a
    transaction); True when this call forked."""
    if await is_known(conn, run_id, execution_id):
        return False
    locked = await fetch_one(conn, _LOCK_RUN, {"run_id": run_id})
    if locked is None:
        raise UnknownRun(run_id)
    if await is_known(conn, run_id, execution_id):  # a concurrent activity forked it first
        return False
    parent = locked["execution_id"]
    if point.parent and point.parent != execution_id and await is_known(conn, run_id, point.parent):
        parent = point.parent  # a reset of an execution that is no longer the current one
    params: dict[str, object] = {
        "run_id": run_id,
        "execution": execution_id,
        "parent": parent,
        "steps": point.steps,
        "work": point.work,
        "turns": point.turns,
    }
    if point.turns is None:
        row = await fetch_one(conn, _TURNS, params)
        params["turns"] = row["turns"] if row else 0
    await execute(conn, _INSERT_EXECUTION, params)
    for copy in [*_COPIES, verdicts.COPY]:
        await execute(conn, copy, params)
    params["counters"] = Jsonb(Counters().model_dump())
    await execute(conn, _MAKE_CURRENT, params)
    return True


async def load_executions(conn: Connection, run_id: str) -> list[ExecutionRow]:
    return [
        ExecutionRow.model_validate(row)
        for row in await fetch_all(conn, _SELECT_EXECUTIONS, (run_id,))
    ]

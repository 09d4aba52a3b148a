"""Each execution of a run keeps its own rows: the fork a reset makes, on a real PostgreSQL.

A run recorded by execution `first` (turns 1-3, steps 1-3, a search at step 1, a source read at
step 2, evidence at step 3, a report) is entered by `second`, an execution it has not seen, as a
reset's first activity would: before step 3's work.
"""

from __future__ import annotations

import uuid
from typing import LiteralString

import psycopg
import pytest
from psycopg import sql

from activities.evidence import record_evidence
from activities.ledger import ForkPoint, Ledger, RunIdTaken
from activities.snapshots import snapshot
from runtime.database import Pool, apply_migrations, migrations, open_pool
from runtime.privileges import url_as
from tests.fakes.postgres import granted_roles
from tests.integration.test_ledger import (
    STARTED,
    evidence_input,
    extracted,
    page,
    report_input,
)
from workflows.contracts import StepRecord
from workflows.models import Brief, Decision, RunStatus, SearchHit, ToolCall, Usage
from workflows.scope import RunScope

BRIEF = Brief(question="How do hybrid caches invalidate?", allowed_hosts=["docs.example"])
BEFORE_STEP_3 = ForkPoint(turns=3, steps=2, work=2)


def decision(query: str) -> Decision:
    call = ToolCall(id="c", name="search_web", arguments=f'{{"query": "{query}"}}')
    return Decision(tool_calls=[call], usage=Usage(input_tokens=10, output_tokens=2), model="m")


def step(run_id: str, number: int, summary: str = "") -> StepRecord:
    return StepRecord(
        scope=RunScope.record_of(run_id, "", number, number, ""),
        tool="search_web",
        arguments="{}",
        ok=True,
        summary=summary or f"step {number}",
    )


async def recorded_run(ledger: Ledger, first: str) -> str:
    """A run as execution `first` wrote it, three turns long, ended with a report."""
    run_id = f"fork-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, STARTED, execution_id=first)
    for turn in (1, 2, 3):
        await ledger.record_model_call(run_id, turn, decision(f"q{turn}"), "openai", 100)
    hit = SearchHit(url="https://docs.example/cache.txt", host="docs.example")
    await ledger.record_search(run_id, 1, "hybrid caches", "corpus", [hit], execution=first)
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()), execution=first, step=2)
    request = evidence_input(run_id, passage_id="S1.P2", step=3, turn=3)
    assert (await record_evidence(ledger, request, execution=first)).evidence is not None
    for number in (1, 2, 3):
        await ledger.record_step(step(run_id, number), execution=first)
    assert await ledger.save_report(report_input(run_id), "# first", execution=first)
    return run_id


async def test_an_unseen_execution_forks_the_rows_before_its_point(
    ledger: Ledger, pool: Pool
) -> None:
    run_id = await recorded_run(ledger, "first")

    assert await ledger.enter(run_id, "second", BEFORE_STEP_3) is True
    assert await ledger.enter(run_id, "second", BEFORE_STEP_3) is False, "a retry forks nothing"

    rows = await ledger.run_rows(run_id)
    assert rows is not None and rows.run.execution_id == "second"
    assert (rows.run.status, rows.run.stop_reason, rows.run.finished_at) == (
        RunStatus.RUNNING, None, None
    )  # fmt: skip
    assert [call.turn for call in rows.model_calls] == [1, 2, 3]
    assert [s.step for s in rows.steps] == [1, 2]
    assert [s.step for s in rows.searches] == [1] and rows.searches[0].results
    assert [s.source_id for s in rows.sources] == ["S1"] and len(rows.passages) == 4
    assert rows.evidence == [] and rows.report is None  # step 3's quote is asked again
    assert await ledger.report(run_id) is None
    # The first execution's rows are untouched, and readable under its id.
    assert await ledger.report(run_id, execution="first") == "# first"
    assert len(await ledger.evidence_rows(run_id, execution="first")) == 1
    # The copied prefix keeps its hash chain: the same links under both executions.
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT step, execution_id, chain FROM research.steps WHERE run_id = %s "
            "ORDER BY step, execution_id",
            (run_id,),
        )
        links = await cursor.fetchall()
    assert [(step, execution) for step, execution, _ in links] == [
        (1, "first"), (1, "second"), (2, "first"), (2, "second"), (3, "first")
    ]  # fmt: skip
    assert links[0][2] == links[1][2] and links[2][2] == links[3][2] and links[0][2]
    listed = await ledger.executions(run_id)
    assert [(x.execution_id, x.parent_execution_id, x.current) for x in listed] == [
        ("first", None, False), ("second", "first", True)
    ]  # fmt: skip


async def test_evidence_from_a_run_started_before_inputs_carried_its_step_forks_with_it(
    ledger: Ledger,
) -> None:
    """A run started before `record_evidence` was told its step (0): the ledger takes the next
    step, so a reset after it still copies the quote (a NULL step would never be copied)."""
    run_id = f"fork-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, STARTED, execution_id="first")
    await ledger.store_source(
        run_id, "S1", snapshot(page(), extracted()), execution="first", step=1
    )
    await ledger.record_step(step(run_id, 1), execution="first")
    old = evidence_input(run_id, passage_id="S1.P2")  # step and turn 0, as old histories send
    assert (await record_evidence(ledger, old, execution="first")).evidence is not None
    await ledger.record_step(step(run_id, 2), execution="first")

    assert await ledger.enter(run_id, "second", ForkPoint(turns=3, steps=2, work=2)) is True

    assert [e.id for e in await ledger.evidence_rows(run_id)] == ["E001"]


async def test_the_new_execution_writes_its_own_rows_where_the_old_ones_differ(
    ledger: Ledger,
) -> None:
    run_id = await recorded_run(ledger, "first")
    await ledger.enter(run_id, "second", BEFORE_STEP_3)

    # Turn 3 is in the copy; a turn 4 the model answers differently is stored for `second` only.
    assert await ledger.decision(run_id, 4) is None
    await ledger.record_model_call(run_id, 4, decision("other"), "openai", 100, execution="second")
    await ledger.record_step(step(run_id, 3, "a different step 3"), execution="second")
    assert await ledger.decision(run_id, 4, execution="first") is None
    rows = await ledger.run_rows(run_id)
    assert rows is not None
    assert [s.summary for s in rows.steps] == ["step 1", "step 2", "a different step 3"]
    assert await ledger.save_report(report_input(run_id), "# second", execution="second")
    run = await ledger.run(run_id)
    assert run is not None and run.status == RunStatus.COMPLETED
    assert await ledger.report(run_id) == "# second"


async def test_a_reset_of_an_older_execution_copies_that_execution_s_rows(
    ledger: Ledger,
) -> None:
    """`first` was reset to `second`, which wrote its own step 3; now `first` is reset again, after
    its step 3: `third` must hold first's step 3 (the history it replays), not second's."""
    run_id = await recorded_run(ledger, "first")
    await ledger.enter(run_id, "second", BEFORE_STEP_3)
    await ledger.record_step(step(run_id, 3, "second's step 3"), execution="second")

    after_step_3 = ForkPoint(turns=3, steps=3, work=3, parent="first")
    assert await ledger.enter(run_id, "third", after_step_3) is True

    rows = await ledger.run_rows(run_id)
    assert rows is not None and rows.run.execution_id == "third"
    assert [s.summary for s in rows.steps] == ["step 1", "step 2", "step 3"]
    assert [e.id for e in rows.evidence] == ["E001"]
    listed = {x.execution_id: x.parent_execution_id for x in await ledger.executions(run_id)}
    assert listed == {"first": None, "second": "first", "third": "first"}


async def test_steps_link_the_same_whether_the_step_before_is_held_or_read(pool: Pool) -> None:
    """A Ledger links a step right after the one it recorded last to that one's chain without
    reading it; the links are those a Ledger reading the step before writes (an execution's
    links leave its id out, so three executions of one run, each with no rows copied, chain
    alike), and a step another process recorded in between is read."""
    run_id, empty = f"chain-{uuid.uuid4().hex[:12]}", ForkPoint(turns=0, steps=0, work=0)
    one, other = Ledger(pool), Ledger(pool)
    assert await one.start_run(run_id, BRIEF, STARTED, execution_id="held")
    for execution in ("read", "shared"):
        assert await one.enter(run_id, execution, empty)
    for number in (1, 2, 3, 4, 5):
        assert await one.record_step(step(run_id, number), execution="held")
        assert await Ledger(pool).record_step(step(run_id, number), execution="read")
    for number, ledger in ((1, one), (2, other), (3, one), (4, one)):
        assert await ledger.record_step(step(run_id, number), execution="shared")
    assert not await one.record_step(step(run_id, 4), execution="shared"), "recorded already"
    assert await one.record_step(step(run_id, 5), execution="shared")

    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT execution_id, step, chain FROM research.steps WHERE run_id = %s ORDER BY step",
            (run_id,),
        )
        links: dict[str, list[tuple[int, str]]] = {}
        for execution, number, link in await cursor.fetchall():
            links.setdefault(execution, []).append((number, link))
    assert links["held"] == links["read"] == links["shared"]
    assert [number for number, _ in links["held"]] == [1, 2, 3, 4, 5]


async def test_a_late_write_of_the_old_execution_keeps_to_its_own_rows(ledger: Ledger) -> None:
    run_id = f"fork-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, STARTED, execution_id="first")
    await ledger.record_step(step(run_id, 1), execution="first")
    await ledger.enter(run_id, "second", ForkPoint(turns=1, steps=1, work=1))

    # An activity the old execution left in flight finishes after the reset.
    await ledger.record_step(step(run_id, 2, "late"), execution="first")
    assert await ledger.save_report(report_input(run_id), "# late", execution="first")

    run = await ledger.run(run_id)
    assert run is not None and run.status == RunStatus.RUNNING, "the current run is not ended"
    rows = await ledger.run_rows(run_id)
    assert rows is not None and [s.step for s in rows.steps] == [1] and rows.report is None
    assert await ledger.report(run_id, execution="first") == "# late"


async def test_a_reset_to_the_start_forks_empty_and_a_reused_id_is_refused(
    ledger: Ledger, pool: Pool
) -> None:
    run_id = f"fork-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, STARTED, "first", first_execution_id="first")
    await ledger.record_step(step(run_id, 1), execution="first")

    # Temporal keeps the first run id across resets: the same workflow, replayed from its start.
    assert not await ledger.start_run(run_id, BRIEF, STARTED, "second", first_execution_id="first")
    rows = await ledger.run_rows(run_id)
    assert rows is not None and rows.run.execution_id == "second" and rows.steps == []
    # A new workflow under the same id has its own first run id: refused, as before.
    with pytest.raises(RunIdTaken):
        await ledger.start_run(run_id, BRIEF, STARTED, "third", first_execution_id="third")
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM research.steps WHERE run_id = %s", (run_id,)
        )
        assert await cursor.fetchone() == (1,)


async def test_the_worker_role_may_fork_a_run(pg_url: str) -> None:
    """A fork is inserts and the run row's mutable columns: the least-privileged worker may."""
    with granted_roles(pg_url) as roles:
        worker = await open_pool(url_as(pg_url, roles.worker), max_size=2)
        try:
            ledger = Ledger(worker)
            run_id = await recorded_run(ledger, "first")
            assert await ledger.enter(run_id, "second", BEFORE_STEP_3)
            rows = await ledger.run_rows(run_id)
            assert rows is not None and rows.run.execution_id == "second"
            assert [s.step for s in rows.steps] == [1, 2]
        finally:
            await worker.close()


OLD_ROWS: list[LiteralString] = [
    "INSERT INTO research.runs (run_id, question, brief, started_at, execution_id) VALUES "
    "('old', 'q?', '{}', now(), 'exec-old'), ('older', 'q?', '{}', now(), NULL)",
    "INSERT INTO research.steps (run_id, step, turn, tool, ok, recorded_at) VALUES "
    "('old', 1, 1, 'read_page', true, now() - interval '2 s'), "
    "('old', 2, 2, 'record_evidence', true, now())",
    "INSERT INTO research.sources (run_id, source_id, url, status, error, fetched_at) VALUES "
    "('old', 'S1', 'https://docs.example/a', 'failed', 'gone', now() - interval '3 s')",
    "INSERT INTO research.reports (run_id, status, stop_reason, answer) VALUES "
    "('old', 'incomplete', 'step_limit', 'a')",
]


def test_a_ledger_from_before_executions_upgrades_to_its_runs_execution(pg_url: str) -> None:
    database = f"upgrade_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    url = psycopg.conninfo.make_conninfo(pg_url, dbname=database)
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA research")
            conn.execute("CREATE TABLE research.schema_migrations (version text PRIMARY KEY)")
            for migration in [m for m in migrations() if m.version < "010"]:
                conn.execute(migration.sql.encode("utf-8"))
                conn.execute(
                    "INSERT INTO research.schema_migrations VALUES (%s)", (migration.version,)
                )
            for statement in OLD_ROWS:
                conn.execute(statement)
        assert apply_migrations(url)[:2] == ["010_executions", "011_hash_chains"]
        with psycopg.connect(url) as conn:
            assert conn.execute(
                "SELECT run_id, execution_id FROM research.executions ORDER BY run_id"
            ).fetchall() == [("old", "exec-old"), ("older", "")]
            assert conn.execute(
                "SELECT execution_id, step FROM research.sources WHERE run_id = 'old'"
            ).fetchall() == [("exec-old", 1)]  # stored before step 1 was recorded
            assert conn.execute(
                "SELECT steps, report_composed, executions FROM research.run_summary "
                "WHERE run_id = 'old'"
            ).fetchall() == [(None, False, 1)]
            assert conn.execute(
                "SELECT count(*) FROM research.steps WHERE execution_id = 'exec-old'"
            ).fetchone() == (2,)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database)))

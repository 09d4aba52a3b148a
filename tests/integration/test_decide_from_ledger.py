"""The lean loop's `decide`: the transcript read back from the ledger up to the watermark,
compacted to the budget, its size reported; a transcript that cannot fit asks no model."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from psycopg_pool import AsyncConnectionPool
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.model import ModelActivities
from baselines.offline import decide_offline
from runtime.database import open_pool
from runtime.settings import Settings
from workflows import context
from workflows.contracts import DecideInput, StepRecord
from workflows.models import Brief, Decision, ToolCall
from workflows.scope import ForkPoint, RunScope
from workflows.tools import SearchArgs, SearchData, SearchResultItem
from workflows.transcript import ToolResult, TranscriptEntry

BRIEF = Brief(question="How do caches invalidate?", allowed_hosts=["docs.example"])


@pytest.fixture
async def ledger(pg_url: str) -> AsyncIterator[Ledger]:
    pool: AsyncConnectionPool = await open_pool(pg_url, max_size=2)  # type: ignore[type-arg]
    try:
        yield Ledger(pool)
    finally:
        await pool.close()


def step(run_id: str, number: int, label: str = "query") -> StepRecord:
    args = SearchArgs(query=f"{label} {number}")
    hit = SearchResultItem(url=f"https://docs.example/{number}", snippet="s" * 500)
    entry = TranscriptEntry(
        step=number,
        call=ToolCall(id=f"c{number}", name="search_web", arguments=args.model_dump_json()),
        result=ToolResult(ok=True, data=SearchData(results=[hit])),
        args=args,
    )
    return StepRecord(
        scope=RunScope.record_of(run_id, "", number, number, ""),
        tool="search_web",
        arguments=entry.call.arguments,
        ok=True,
        entry=entry,
    )


async def test_decide_reads_the_steps_up_to_the_watermark(ledger: Ledger) -> None:
    run_id = f"test-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, "2025-01-02T03:04:05+00:00")
    for number in (1, 2, 3):
        await ledger.record_step(step(run_id, number))
    decide = ModelActivities(
        Settings(model_provider="offline").chat_options(), ledger, None, decide_offline
    ).decide
    env = ActivityEnvironment()

    request = DecideInput(
        scope=RunScope.turn_of(run_id, "", 3, 2, ""),
        brief=BRIEF,
        watermark=2,
        context_budget=60_000,
    )
    decision = await env.run(decide, request)

    shown = [entry.step for entry in await ledger.transcript(run_id, 2)]
    assert shown == [1, 2], "a retried turn sees the same steps, never a later one"
    assert decision.context_chars == context.size(await ledger.transcript(run_id, 2))
    assert decision.tool_calls and not decision.over_context
    again = await env.run(decide, request)
    assert again.tool_calls == decision.tool_calls, "the recorded answer, not a second call"

    scope = RunScope.turn_of(run_id, "", 4, 3, "")
    tight = request.model_copy(update={"scope": scope, "watermark": 3, "context_budget": 100})
    refused = await env.run(decide, tight)
    assert refused.over_context and not refused.tool_calls
    assert refused.context_chars > 100
    assert await ledger.decision(run_id, 4) is None, "no model was asked"


async def test_decide_records_the_steps_it_carries_once_then_reads_them(ledger: Ledger) -> None:
    """The steps since the last decide travel in its input: written before it reads the
    transcript, so the model is shown them; a retried decide writes none twice."""
    run_id = f"test-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, "2025-01-02T03:04:05+00:00")
    await ledger.record_step(step(run_id, 1))
    decide = ModelActivities(
        Settings(model_provider="offline").chat_options(), ledger, None, decide_offline
    ).decide
    env = ActivityEnvironment()
    carried = [step(run_id, 2), step(run_id, 3)]  # a parallel turn's two steps
    request = DecideInput(
        scope=RunScope.turn_of(run_id, "", 3, 3, "", rows=1),
        brief=BRIEF,
        watermark=3,
        context_budget=60_000,
        records=carried,
    )
    assert request.scope.fork == ForkPoint(turns=2, steps=1, work=3), "rows up to 1, work to 3"

    decision = await env.run(decide, request)
    again = await env.run(decide, request)

    assert [s.step for s in await ledger.steps(run_id)] == [1, 2, 3], "each step once"
    assert decision.context_chars == context.size(await ledger.transcript(run_id, 3))
    assert again.tool_calls == decision.tool_calls
    assert not await ledger.record_step(carried[0]), "recorded already"
    bare = DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
    assert "records" not in bare.model_dump(), "an input without records is as it was"


@pytest.fixture(params=["transcript", "turn"])
def read(request: pytest.FixtureRequest) -> str:
    """How decide reads: the transcript alone, or with the turn's recorded decision (one round
    trip, `Ledger.turn`); both read the same entries."""
    return str(request.param)


async def shown(ledger: Ledger, run_id: str, upto: int, execution: str, read: str) -> list[str]:
    if read == "turn":
        recorded, entries = await ledger.turn(run_id, 99, upto, execution=execution)
        assert recorded is None
    else:
        entries = await ledger.transcript(run_id, upto, execution=execution)
    return [entry.args.query for entry in entries if isinstance(entry.args, SearchArgs)]


async def test_each_execution_reads_its_own_transcript(ledger: Ledger, read: str) -> None:
    """The transcript a process read before is reused only for the same run and execution, and
    only while the rows up to it are the same: a reset's fork, a step of its own and a row below
    what was read all show."""
    run_id = f"test-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, "2025-01-02T03:04:05+00:00", "first")
    for number in (1, 2, 3):
        await ledger.record_step(step(run_id, number, "first"), execution="first")
    assert await shown(ledger, run_id, 3, "first", read) == ["first 1", "first 2", "first 3"]

    # A reset before step 3: the fork holds steps 1-2 of `first`, then a step 3 of its own.
    assert await ledger.enter(run_id, "second", ForkPoint(turns=2, steps=2, work=2))
    assert await shown(ledger, run_id, 3, "second", read) == ["first 1", "first 2"]
    await ledger.record_step(step(run_id, 3, "second"), execution="second")
    assert await shown(ledger, run_id, 3, "second", read) == ["first 1", "first 2", "second 3"]
    assert await shown(ledger, run_id, 2, "second", read) == ["first 1", "first 2"], (
        "a lower watermark"
    )

    # The first execution goes on (a continued execution writes under it): its own rows.
    assert await shown(ledger, run_id, 3, "first", read) == ["first 1", "first 2", "first 3"]
    await ledger.record_step(step(run_id, 4, "first"), execution="first")
    assert await shown(ledger, run_id, 4, "first", read) == [f"first {n}" for n in (1, 2, 3, 4)]

    # A row below the steps read (never written so by a workflow): every entry is read again.
    assert await ledger.enter(run_id, "third", ForkPoint(turns=1, steps=1, work=1))
    await ledger.record_step(step(run_id, 3, "third"), execution="third")
    assert await shown(ledger, run_id, 3, "third", read) == ["first 1", "third 3"]
    await ledger.record_step(step(run_id, 2, "third"), execution="third")
    assert await shown(ledger, run_id, 3, "third", read) == ["first 1", "third 2", "third 3"]


async def test_a_turn_reads_its_recorded_decision_with_the_transcript(ledger: Ledger) -> None:
    run_id = f"test-{uuid.uuid4().hex[:12]}"
    assert await ledger.start_run(run_id, BRIEF, "2025-01-02T03:04:05+00:00", "first")
    for number in (1, 2):
        await ledger.record_step(step(run_id, number), execution="first")
    decision = Decision(tool_calls=[ToolCall(id="c", name="search_web", arguments="{}")])
    assert await ledger.record_model_call(run_id, 3, decision, "openai", 10, execution="first")

    recorded, entries = await ledger.turn(run_id, 3, 2, execution="first")
    assert recorded == await ledger.decision(run_id, 3, execution="first") is not None
    assert entries == await ledger.transcript(run_id, 2, execution="first")
    assert [entry.step for entry in entries] == [1, 2]
    assert (await ledger.turn(run_id, 4, 2, execution="first"))[0] is None

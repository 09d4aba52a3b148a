"""A long run continues as new every N steps (here 10, as start_run says) and stays one
investigation: bounds, IDs, turn numbers, signals and updates carry over; each execution's history
replays; `history_chain` finds every execution and `history_facts` reads them as one."""

from __future__ import annotations

import json

from temporalio.client import Client, WorkflowHistory

from starter.history import history_chain, history_facts
from starter.replay import replay_history
from tests.workflow.harness import (
    PAGE_A,
    PAGE_B,
    PAGES,
    Checkpoint,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    record,
    research_worker,
    start,
)
from workflows import contracts
from workflows.continuation import HISTORY_BYTES, Continuation
from workflows.models import (
    Decision,
    ExtendLimitsInput,
    GuidanceInput,
    Progress,
    RunResult,
    RunStatus,
    SeedUrlsInput,
    StopReason,
)
from workflows.research import ResearchWorkflow

EVERY = 10
OPENING = [
    call("search_web", query="timeout attempts"),
    call("read_page", url=PAGE_A),
    record("Q1", "S1", passage_id="S1.P2", claim="the timeout is 30 s"),
    call("read_page", url=PAGE_B),
    record("Q2", "S2", passage_id="S2.P1", claim="5 attempts"),
]
REREAD = call("read_page", source_id="S1", find="timeout")  # a stored source: no fetch spent
SEED = "https://a.example/extra"


def script(finish_at: int | None) -> list[Decision]:
    turns = [*OPENING, *[REREAD] * 60]
    if finish_at is not None:
        turns[finish_at - 1] = finish(["E001"], ["E002"])
    return turns


def carried_of(history: WorkflowHistory) -> Continuation | None:
    payloads = history.events[0].workflow_execution_started_event_attributes.input.payloads
    return Continuation.model_validate(json.loads(payloads[1].data)) if len(payloads) > 1 else None


async def test_a_long_run_continues_as_new_and_stays_one_investigation(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    hold = Checkpoint(turn=15)  # in the second execution
    started = contracts.StartRunResult(continue_after_steps=EVERY)
    stand_ins = StandIns(web, script(finish_at=None), checkpoint=hold, started=started)
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief(max_steps=30, max_searches=2))
        await hold.reached.wait()
        await handle.signal(ResearchWorkflow.add_guidance, GuidanceInput(text="prefer the docs"))
        added = await handle.execute_update(ResearchWorkflow.add_seeds, SeedUrlsInput(urls=[SEED]))
        raised = await handle.execute_update(
            ResearchWorkflow.extend_limits, ExtendLimitsInput(max_steps=33)
        )
        hold.released.set()
        result: RunResult = await handle.result()
        progress: Progress = await handle.query(ResearchWorkflow.progress)
        histories = await history_chain(client, handle.id)

    assert added.accepted == [SEED] and raised.max_steps == 33
    # The extended step bound, spent across four executions (10 + 10 + 10 + 3 steps).
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.steps == 33 and result.counters.model_calls == 33
    assert result.counters.tokens == 33 * 10 and result.counters.searches == 1
    assert result.counters.page_fetches == 2
    assert (result.evidence_count, result.source_count) == (2, 2)
    assert [step.scope.step for step in web.steps] == list(range(1, 34))
    assert [request.scope.turn for request in web.decide_calls] == list(range(1, 34))
    # The steering of the second execution reaches the model in the third and fourth.
    late = [request for request in web.decide_calls if request.scope.turn > 20]
    assert all(r.guidance == ["prefer the docs"] and r.seeds == [SEED] for r in late)
    assert [r.budget.steps_left for r in late] == [33 - turn + 1 for turn in range(21, 34)]
    # Four executions, each its own Temporal run: the first continued at step 10, and so on.
    assert len(histories) == 4
    executions = {request.scope.execution for request in web.decide_calls}
    assert executions == {history.events[0].workflow_execution_started_event_attributes
                          .original_execution_run_id for history in histories}  # fmt: skip
    carried = [carried_of(history) for history in histories]
    assert carried[0] is None
    continued = [c for c in carried if c is not None]
    assert [c.steps_before for c in continued] == [10, 20, 30]
    assert [c.execution for c in continued] == [2, 3, 4]
    assert {c.state.started_at for c in continued} == {continued[0].state.started_at}
    assert all(len(c.state.transcript) <= 50 for c in continued)
    assert continued[-1].state.limits.max_steps == 33  # the extended limit travels
    # The start ran once; the report was saved once, by the last execution.
    assert len(web.reports) == 1 and web.reports[0].counters == result.counters
    # Each execution's history replays against the code, and is small.
    for history in histories:
        assert await replay_history(history) is None
        assert len(history.to_json()) < 5_000_000
    # The chain reads as one history: every step recorded, the brief, the update, the result.
    facts = history_facts(histories)
    assert facts.executions == 4 and facts.closed == "completed"
    assert len(facts.of_type(contracts.START_RUN)) == 1
    assert [s[0] if s else None for s in facts.recorded_steps()] == list(range(1, 34))
    assert [u.name for u in facts.updates] == ["add_seeds", "extend_limits"]
    assert facts.brief == json.loads(make_brief(max_steps=30, max_searches=2).model_dump_json())
    assert facts.result == result
    # The query of the last execution shows the whole run.
    assert progress.counters == result.counters and progress.recent_steps[-1].step == 33


async def test_a_continued_run_finishes_through_the_gate_on_carried_evidence(
    client: Client,
) -> None:
    web = FakeWeb(pages=PAGES)
    started = contracts.StartRunResult(continue_after_steps=EVERY)
    stand_ins = StandIns(web, script(finish_at=25), started=started)
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief(max_steps=40))
        result: RunResult = await handle.result()
        histories = await history_chain(client, handle.id)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.counters.steps == 25 and len(histories) == 3
    assert [q.id for q in result.quotes] == ["E001", "E002"]
    assert [f.evidence_ids for f in result.report.findings] == [["E001"], ["E002"]]


async def test_a_run_started_before_continue_as_new_never_continues(client: Client) -> None:
    """start_run recorded no step threshold (0): the run keeps one execution, as it started."""
    web = FakeWeb(pages=PAGES)
    stand_ins = StandIns(web, script(finish_at=None), started=contracts.StartRunResult())
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief(max_steps=25))
        result: RunResult = await handle.result()
        histories = await history_chain(client, handle.id)

    assert result.counters.steps == 25 and len(histories) == 1


async def test_a_run_continues_as_new_when_its_history_grows_past_its_size(client: Client) -> None:
    """A verbose model (100 KB of text beside each call, recorded in history with its answer)
    fills the history before the step threshold (here 1,000): the run continues at HISTORY_BYTES
    as Temporal reports it, and each execution stays near it."""
    verbose = REREAD.model_copy(update={"text": "thinking aloud " * 7_000})
    web = FakeWeb(pages=PAGES)
    started = contracts.StartRunResult(continue_after_steps=1_000)
    stand_ins = StandIns(web, [*OPENING[:2], *[verbose] * 60], started=started)
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief(max_steps=60))
        result: RunResult = await handle.result()
        histories = await history_chain(client, handle.id)

    # Temporal's measure: the events' encoded size (a JSON export is larger: base64 payloads).
    sizes = [sum(event.ByteSize() for event in history.events) for history in histories]
    assert result.counters.steps == 60 and len(histories) >= 3, sizes
    # Checked before each turn: an execution ends at most one turn's worth past the threshold.
    assert all(size < HISTORY_BYTES + 250_000 for size in sizes), sizes
    assert all(size >= HISTORY_BYTES for size in sizes[:-1]), sizes  # size, not steps, ended them
    continued = [c for c in map(carried_of, histories) if c is not None]
    assert all(0 < c.steps_before < 60 for c in continued)

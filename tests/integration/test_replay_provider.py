"""The `replay` provider on a real ledger: a rerun's turn is the source's recorded decision, and a
turn with several tool calls is replayed as the source ran it (each call run, or the turn refused
whole by a worker that allowed one call), as the source's step rows tell."""

from __future__ import annotations

import uuid

from activities.ledger import Ledger
from activities.model.replay import decide_replay
from tests.integration.test_ledger import STARTED
from workflows.contracts import DecideInput, StepRecord
from workflows.models import Brief, Decision, ToolCall, Usage
from workflows.scope import RunScope

BRIEF = Brief(question="How do hybrid caches invalidate?", allowed_hosts=["docs.example"])
TWO_CALLS = Decision(
    tool_calls=[
        ToolCall(id="a", name="search_web", arguments='{"query": "hybrid caches"}'),
        ToolCall(id="b", name="search_web", arguments='{"query": "invalidation"}'),
    ],
    usage=Usage(input_tokens=10, output_tokens=2),
    model="m",
)


async def source_run(ledger: Ledger, steps: list[StepRecord]) -> str:
    run_id = f"source-{uuid.uuid4().hex[:10]}"
    assert await ledger.start_run(run_id, BRIEF, STARTED, execution_id="first")
    await ledger.record_model_call(run_id, 1, TWO_CALLS, "openai", 100, execution="first")
    for record in steps:
        await ledger.record_step(
            record.model_copy(update={"scope": record.scope.model_copy(update={"run_id": run_id})}),
            execution="first",
        )
    return run_id


def step(number: int, tool: str, error: str | None = None) -> StepRecord:
    return StepRecord(
        scope=RunScope.record_of("", "", number, 1, ""),
        tool=tool,
        arguments="{}",
        ok=error is None,
        error=error,
    )


async def replayed(ledger: Ledger, source: str) -> Decision:
    brief = BRIEF.model_copy(update={"rerun_of": source})
    return await decide_replay(
        ledger, DecideInput(scope=RunScope.turn_of("rerun", "", 1, 0, ""), brief=brief)
    )


async def test_a_turn_whose_calls_all_ran_is_replayed_with_parallel_calls(ledger: Ledger) -> None:
    source = await source_run(ledger, [step(1, "search_web"), step(2, "search_web")])

    decision = await replayed(ledger, source)

    assert decision.tool_calls == TWO_CALLS.tool_calls and decision.parallel_tool_calls


async def test_a_turn_the_source_refused_whole_is_replayed_without(ledger: Ledger) -> None:
    refused = step(1, "", error="2 tool calls in this turn: call one tool per turn")
    source = await source_run(ledger, [refused])

    decision = await replayed(ledger, source)

    assert decision.tool_calls == TWO_CALLS.tool_calls and not decision.parallel_tool_calls

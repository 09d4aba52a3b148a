"""How the loop reads a turn and an activity's failure (`workflows.outcomes`, pure): a turn's
calls that cannot run, a local activity's failure as a regular one's, a model call abandoned."""

from __future__ import annotations

import asyncio

import pytest
from temporalio.exceptions import ApplicationError, RetryState, TimeoutError, TimeoutType

from workflows.cleaning import MAX_CALLS_PER_TURN
from workflows.ending import Outcome
from workflows.models import Decision, RunStatus, StopReason, ToolCall
from workflows.outcomes import (
    abandon,
    cancellable,
    checked,
    local_failure,
    malformed,
    stopped,
    unread,
)
from workflows.verification import Verification


def turn(calls: int, *, sent: int = 0, parallel: bool = False) -> Decision:
    tool_calls = [ToolCall(id=f"c{n}", name="search_web", arguments="{}") for n in range(calls)]
    return Decision(tool_calls=tool_calls, tool_calls_sent=sent, parallel_tool_calls=parallel)


def test_a_turn_runs_one_call_or_as_many_parallel_calls_as_allowed() -> None:
    assert malformed(turn(1)) == ""
    assert malformed(turn(2, parallel=True)) == ""
    assert malformed(turn(0)) == "no tool call in this turn: call exactly one tool per turn"
    assert malformed(turn(2)) == "2 tool calls in this turn: call exactly one tool per turn"
    # The provider says how many it was sent, even where fewer reached the decision.
    assert malformed(turn(1, sent=3)) == "3 tool calls in this turn: call exactly one tool per turn"
    many = MAX_CALLS_PER_TURN + 1
    assert malformed(turn(many, parallel=True)) == (
        f"{many} tool calls in this turn: call at most {MAX_CALLS_PER_TURN} tools per turn"
    )


def test_a_local_activitys_failure_carries_the_retry_state_a_regular_one_would() -> None:
    refused = ApplicationError("refused", type="LedgerRefused", non_retryable=True)
    assert local_failure("record_step", refused).retry_state == RetryState.NON_RETRYABLE_FAILURE
    assert local_failure("record_step", ApplicationError("odd")).retry_state is None
    timeout = TimeoutError("slow", type=TimeoutType.SCHEDULE_TO_CLOSE, last_heartbeat_details=[])
    failure = local_failure("search_web", timeout)
    assert (failure.retry_state, failure.activity_type) == (RetryState.TIMEOUT, "search_web")


def test_a_bound_ends_the_run_incomplete_with_its_reason() -> None:
    outcome = stopped(StopReason.STEP_LIMIT)
    assert (outcome.status, outcome.stop_reason, outcome.report) == (
        RunStatus.INCOMPLETE,
        StopReason.STEP_LIMIT,
        None,
    )


async def test_an_abandoned_call_is_cancelled_and_its_end_taken() -> None:
    async def model_call() -> None:
        await asyncio.sleep(60)

    call = asyncio.ensure_future(model_call())
    await asyncio.sleep(0)
    abandon(call)
    with pytest.raises(asyncio.CancelledError):
        await call
    assert call.cancelled()


async def test_cancellable_passes_results_and_other_errors_through() -> None:
    async def answer() -> int:
        return 7

    assert await cancellable(answer()) == 7

    async def broken() -> int:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        await cancellable(broken())


async def test_an_unread_call_runs_on_and_its_end_is_taken_when_it_comes() -> None:
    release = asyncio.Event()

    async def model_call() -> None:
        await release.wait()
        raise RuntimeError("answered too late")

    call = asyncio.ensure_future(model_call())
    unread(call)
    await asyncio.sleep(0)
    assert not call.done()  # left running, not cancelled
    release.set()
    await asyncio.sleep(0)
    assert call.done() and not call.cancelled()


def test_a_completed_report_the_rules_alone_passed_is_labelled_with_the_workers_verifier() -> None:
    composed = Outcome(status=RunStatus.COMPLETED, stop_reason=StopReason.OPERATOR_FINISH)
    assert checked(composed, "off", "") == Verification(mode="off")
    read = Verification(mode="model", verifier="openai gpt-4o-mini")
    gated = composed.model_copy(update={"verification": read})
    assert checked(gated, "off", "") is read  # checked already: kept as it was
    stopped_run = stopped(StopReason.STEP_LIMIT)
    assert checked(stopped_run, "model", "openai gpt-4o-mini") == Verification()

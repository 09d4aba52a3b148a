"""The `replay` provider: a rerun's `decide` hands back the decisions recorded for its source run.

`research rerun` starts a run whose brief names the source run (`Brief.rerun_of`). Each turn reads
the source's model call of the same number through the ledger's public reads, so it follows the
source's current execution. No model is ever asked: a turn the source never recorded ends the rerun
as a provider refusal that says so, instead of inventing a decision or calling the worker's model.
"""

from __future__ import annotations

from temporalio.exceptions import ApplicationError

from activities.ledger import Ledger, ledger_errors
from workflows.activity import PROVIDER_ERROR
from workflows.cleaning import MAX_CALLS_PER_TURN
from workflows.contracts import DecideInput
from workflows.models import Decision

PROVIDER = "replay"
# The step the workflow records for a turn it refused whole ("2 tool calls in this turn: ...").
_REFUSED_TURN = "tool calls in this turn"


async def decide_replay(ledger: Ledger, request: DecideInput) -> Decision:
    """The source run's decision for the request's turn, or a non-retryable refusal saying why."""
    source, turn = request.brief.rerun_of, request.scope.turn
    assert source is not None  # the caller checked
    async with ledger_errors():
        recorded = await ledger.decision(source, turn)
    if recorded is None:
        raise ApplicationError(
            f"replay of run {source}: it recorded no model decision for turn {turn}, so "
            "the rerun stops here instead of asking a model",
            type=PROVIDER_ERROR,
            non_retryable=True,
        )
    calls = len(recorded.tool_calls)
    if 1 < calls <= MAX_CALLS_PER_TURN:
        parallel = await _ran_in_parallel(ledger, source, turn)
        recorded = recorded.model_copy(update={"parallel_tool_calls": parallel})
    return recorded


async def _ran_in_parallel(ledger: Ledger, source: str, turn: int) -> bool:
    """Whether the source ran this turn's several calls (its worker allowed parallel calls) rather
    than refusing the turn whole: the model_calls row does not say, the source's steps do."""
    async with ledger_errors():
        steps = [step for step in await ledger.steps(source) if step.turn == turn]
    refused = len(steps) == 1 and not steps[0].tool and _REFUSED_TURN in (steps[0].error or "")
    return not refused

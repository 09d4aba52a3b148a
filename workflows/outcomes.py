"""How the loop reads what ends a run (pure): an activity that gave up, a turn whose calls cannot
run, a model call no longer wanted; each comes to an `Outcome` (`workflows.ending`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any, TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, CancelledError, RetryState
from temporalio.exceptions import TimeoutError as ActivityTimeout

from workflows.activity import PROVIDER_ERROR, PROVIDER_RETRYABLE
from workflows.cleaning import MAX_CALLS_PER_TURN
from workflows.ending import Outcome
from workflows.models import Decision, RunStatus, StopReason
from workflows.verification import Verification, VerifierMode

T = TypeVar("T")


def stopped(stop_reason: StopReason, detail: str = "") -> Outcome:
    """A run a bound ended (incomplete), with a report composed from what it recorded."""
    return Outcome(status=RunStatus.INCOMPLETE, stop_reason=stop_reason, detail=detail)


def checked(outcome: Outcome, verifier: VerifierMode, verifier_name: str) -> Verification:
    """How an ended run's meaning was checked: a completed composed report the rules alone
    passed (an operator's finish with no verifier) carries the worker's verifier mode."""
    if outcome.status is RunStatus.COMPLETED and not outcome.verification.mode:
        return Verification(mode=verifier, verifier=verifier_name)
    return outcome.verification


def failed(error: ActivityError, past_deadline: bool) -> Outcome:
    """How a run ends when an activity gave up (retried until the deadline, or refused at once):
    `provider_error` only on the provider's word; the deadline when the activity merely ran out of
    time; otherwise `infrastructure_error`, naming the activity and the last fault."""
    chain = _causes(error)
    provider = _provider(chain)
    # Temporal also stops early (retry state TIMEOUT) when the next back-off would land past the
    # deadline: that is running out of time too.
    out_of_time = past_deadline or error.retry_state == RetryState.TIMEOUT
    if provider is not None and not (out_of_time and not provider.non_retryable):
        return Outcome(
            status=RunStatus.FAILED, stop_reason=StopReason.PROVIDER_ERROR, detail=provider.message
        )
    faults = [c for c in chain if not isinstance(c, ActivityTimeout)]
    if out_of_time and (provider is not None or not faults):  # nothing failed for good
        return stopped(StopReason.DEADLINE, provider.message if provider is not None else "")
    last = faults[-1] if faults else chain[-1] if chain else error
    fault = last.message if isinstance(last, ApplicationError) else str(last) or type(last).__name__
    kind = last.type if isinstance(last, ApplicationError) and last.type else type(last).__name__
    when = "until the deadline" if out_of_time else "and cannot be retried"
    detail = f"infrastructure: {error.activity_type} failed {when} ({kind}: {fault})"
    return Outcome(
        status=RunStatus.FAILED, stop_reason=StopReason.INFRASTRUCTURE_ERROR, detail=detail
    )


def _causes(error: ActivityError) -> list[BaseException]:
    """The error's causes, outermost first (at most five)."""
    chain: list[BaseException] = []
    cause: BaseException | None = error.cause
    while cause is not None and len(chain) < 5:
        chain.append(cause)
        cause = cause.__cause__
    return chain


def _provider(chain: list[BaseException]) -> ApplicationError | None:
    """The provider's own error among the causes, if any."""
    for cause in chain:
        if isinstance(cause, ApplicationError) and cause.type in (
            PROVIDER_ERROR,
            PROVIDER_RETRYABLE,
        ):
            return cause
    return None


def local_failure(name: str, failure: ApplicationError | ActivityTimeout) -> ActivityError:
    """A local activity's failure as the ActivityError a regular activity's failure arrives as."""
    retry_state: RetryState | None = RetryState.TIMEOUT
    if isinstance(failure, ApplicationError):
        retry_state = RetryState.NON_RETRYABLE_FAILURE if failure.non_retryable else None
    return ActivityError(
        f"local activity {name} failed",
        scheduled_event_id=0,
        started_event_id=0,
        identity="",
        activity_type=name,
        activity_id="",
        retry_state=retry_state,
    )


def malformed(decision: Decision) -> str:
    """Why a turn's calls cannot run as they are ("" when they can): none, or more than allowed."""
    calls = decision.tool_calls
    sent = max(decision.tool_calls_sent, len(calls))
    if not calls:
        return "no tool call in this turn: call exactly one tool per turn"
    if sent > 1 and not decision.parallel_tool_calls:
        return f"{sent} tool calls in this turn: call exactly one tool per turn"
    if sent > MAX_CALLS_PER_TURN:
        return f"{sent} tool calls in this turn: call at most {MAX_CALLS_PER_TURN} tools per turn"
    return ""


def abandon(call: asyncio.Future[Any]) -> None:
    """Cancel a call whose answer is no longer wanted, and take its (cancelled) outcome, so asyncio
    does not log "Task exception was never retrieved" for it."""
    call.cancel()
    call.add_done_callback(lambda done: done.cancelled() or done.exception())


def unread(call: asyncio.Future[Any]) -> None:
    """Leave a call whose answer is no longer wanted, taking its outcome when it comes."""
    call.add_done_callback(lambda done: done.cancelled() or done.exception())


async def cancellable(step: Awaitable[T]) -> T:
    """Await `step`, turning an activity cancelled by a workflow cancellation back into
    asyncio.CancelledError (the SDK reports it as ActivityError), so the run ends CANCELLED."""
    try:
        return await step
    except ActivityError as error:
        if isinstance(error.cause, CancelledError):
            raise asyncio.CancelledError from error
        raise


class Deadline:
    """The run's deadline as one timer, made again only when an update moved the deadline."""

    def __init__(self) -> None:
        self._timer: asyncio.Future[None] | None = None
        self._limit = 0

    def timer(self, state: Any) -> asyncio.Future[None]:
        """The timer of `state`'s deadline (a `RunState`: its limit and the time left)."""
        limit = state.limits.deadline_seconds
        if self._timer is None or self._limit != limit:
            if self._timer is not None:
                self._timer.cancel()
            seconds = max(state.seconds_left(workflow.now()), 0.0)
            # Labelled in the Web UI; a timer's summary is metadata, not part of the command.
            summary = f"deadline: {limit} s after the start"
            self._timer = asyncio.ensure_future(workflow.sleep(seconds, summary=summary))
            self._limit = limit
        return self._timer

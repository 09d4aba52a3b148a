"""How the workflow runs one activity call: its spec's locality, heartbeat and timeouts
(`workflows.activity.Activity`), applied to what start_run recorded and the time left (pure),
and the call itself (`execute`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from pydantic import BaseModel
from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError
from temporalio.exceptions import TimeoutError as ActivityTimeout

from workflows import outcomes
from workflows.activity import Activity, In, Out
from workflows.contracts import StartRunResult
from workflows.hosts import url_host
from workflows.tools.read_page import ReadPageInput

# A local activity runs inside the workflow task's lifetime: an attempt gets less time.
LOCAL_TIMEOUT = timedelta(seconds=30)
# The ledger work around a model call (its rows, the transcript it reads back).
MODEL_LEDGER_WORK = timedelta(seconds=30)
# Measured: 6 s let 100 runs on one saturated worker time out healthy calls (10 in one bench, each
# a model call asked again); 8 s, none, and a killed call runs again after 9.5 s (median, chaos).
HEARTBEAT = timedelta(seconds=8)
# An activity not capped by the deadline (start_run, the save) gets this many timeouts in all.
UNCAPPED_ATTEMPTS = 5
# Retry by cause: infrastructure faults (a lost worker, a timeout, a database restarting) are
# retried until the run's deadline (schedule-to-close), not a fixed count; what a retry cannot fix
# fails at once: errors raised non-retryable (a provider's refusal, a refused ledger write) and
# programming errors. A provider's Retry-After still sets the next delay.
RETRY = RetryPolicy(
    initial_interval=timedelta(seconds=1),
    maximum_interval=timedelta(seconds=10),
    maximum_attempts=0,
    non_retryable_error_types=[  # bugs: the same input fails the same way again
        "TypeError",
        "AttributeError",
        "NameError",
        "AssertionError",
        "NotImplementedError",
        "ValidationError",
        "KeyError",
        "IndexError",
        "ValueError",
        "ZeroDivisionError",
    ],
)


@dataclass(frozen=True)
class CallOptions:
    """One call's options, as `workflow.execute_activity` (or its local twin) takes them."""

    local: bool
    start_to_close: timedelta
    schedule_to_close: timedelta
    heartbeat: timedelta | None  # None: no heartbeat (a local activity never has one)


def options(
    activity: Activity[Any, Any],
    request: BaseModel,
    started: StartRunResult,
    seconds_left: float,
) -> CallOptions:
    """How to run `activity` for `request`: where, and its timeouts, which never reach past the
    run's deadline (`seconds_left`) unless the activity is uncapped."""
    timeout = attempt(activity, started)
    total = timeout * UNCAPPED_ATTEMPTS
    if activity.capped:
        left = timedelta(seconds=max(seconds_left, 1.0)) + activity.grace
        timeout, total = min(timeout, left), min(total, left)
    if runs_locally(activity, request, started):
        return CallOptions(True, min(timeout, LOCAL_TIMEOUT), total, None)
    return CallOptions(False, timeout, total, HEARTBEAT if activity.heartbeat else None)


def attempt(activity: Activity[Any, Any], started: StartRunResult) -> timedelta:
    """One attempt's timeout: a model call's follows the worker's model timeout when recorded."""
    if activity.model_call and started.model_timeout_seconds > 0:
        return timedelta(seconds=started.model_timeout_seconds) + MODEL_LEDGER_WORK
    return activity.timeout


def runs_locally(activity: Activity[Any, Any], request: BaseModel, started: StartRunResult) -> bool:
    """Ledger work, the local corpus search, a page read from the ledger or the corpus and a
    policy model run in the worker as local activities; real models and page reads that may go
    to the web stay regular activities."""
    match activity.local:
        case "always":
            return True
        case "when_search_is_local":
            return started.local_search
        case "when_page_is_local":
            return isinstance(request, ReadPageInput) and (
                not request.fetch or url_host(request.url) in started.local_hosts
            )
        case "when_model_is_local":
            return started.local_model
    return False


async def execute(
    activity: Activity[In, Out],
    request: In,
    options: CallOptions,
    summary: str,
    *,
    in_loop: bool,
) -> Out:
    """Run the activity with these options, a regular or a local activity. A local activity's
    failure `in_loop` (not start_run, not the save) arrives as a regular one's would."""
    if not options.local:
        result: Out = await workflow.execute_activity(
            activity.name,
            request,
            result_type=activity.result,
            start_to_close_timeout=options.start_to_close,
            schedule_to_close_timeout=options.schedule_to_close,
            heartbeat_timeout=options.heartbeat,
            retry_policy=RETRY,
            summary=summary,
        )
        return result
    try:
        local: Out = await workflow.execute_local_activity(
            activity.name,
            request,
            result_type=activity.result,
            start_to_close_timeout=options.start_to_close,
            schedule_to_close_timeout=options.schedule_to_close,
            retry_policy=RETRY,
            summary=summary,
        )
    except (ApplicationError, ActivityTimeout) as failure:
        if not in_loop:
            raise
        raise outcomes.local_failure(activity.name, failure) from failure
    return local

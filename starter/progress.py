"""Following a run: one line per new step while it runs, then the DESIGN.md summary."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError, TemporalError

from starter.errors import CliError
from starter.live import Display, PlainDisplay
from starter.live import step_line as step_line  # where the step lines were first defined
from workflows.models import Counters, Progress, RunResult, RunStatus, StopReason

# The workflow's query, by name: `research status` reads a run without importing the workflow's
# module (its tools, gate and rules); tests/unit/test_cli_startup.py keeps the name the workflow's.
PROGRESS_QUERY = "progress"

POLL_SECONDS = 0.5
QUERY_TIMEOUT = timedelta(seconds=5)
# Temporal lists a worker's poller for minutes after its last poll; a live worker polls again at
# least every minute (a long poll), so an older poll is a worker that went away.
POLLER_FRESH = timedelta(seconds=75)
WORKER_CHECK_SECONDS = 5.0
# How long a command waits to learn whether a worker polls a queue before it says none does.
NO_WORKER_CHECK = timedelta(seconds=2)


# `research status --json`: the same keys, in this order, whatever the state (docs/operations.md).
# A value the run cannot tell in that state is null (a number, limits) or empty (a list, a text).
STATUS_SCHEMA: dict[str, Any] = {
    "run_id": "",
    "status": "",
    "stop_reason": None,
    "counters": None,
    "evidence": None,
    "sources": None,
    "independent_sources": None,
    "open_questions": [],
    "limits": None,
    "seconds_left": None,
    "last_action": "",
    "message": "",
}


def in_schema(data: dict[str, Any]) -> dict[str, Any]:
    """`data` with every key of STATUS_SCHEMA, in its order (and nothing else)."""
    return {name: data.get(name, default) for name, default in STATUS_SCHEMA.items()}


@dataclass(frozen=True)
class Summary:
    """The four DESIGN.md summary lines of a run, whether it completed, and the same as data
    (`research status --json`)."""

    lines: list[str]
    status: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def completed(self) -> bool:
        return self.status == RunStatus.COMPLETED

    def text(self) -> str:
        return "\n".join(self.lines)

    def json_data(self) -> dict[str, Any]:
        """`research status --json`: one schema whatever the state (STATUS_SCHEMA)."""
        return in_schema(self.data)


def summarise(
    run_id: str,
    status: RunStatus | str,
    stop_reason: StopReason | str | None,
    counters: Counters,
    evidence: int,
) -> Summary:
    lines = [
        f"Run: {run_id}",
        f"Status: {status} | Stop: {stop_reason or '-'}",
        f"Steps: {counters.steps} | Searches: {counters.searches} | "
        f"Pages: {counters.page_fetches} | Evidence: {evidence}",
        f"Reported tokens: {counters.tokens}" + _estimated(counters),
    ]
    data = {
        "run_id": run_id,
        "status": str(status),
        "stop_reason": str(stop_reason) if stop_reason else None,
        "counters": counters.model_dump(),
        "evidence": evidence,
    }
    return Summary(lines, str(status), data)


def _estimated(counters: Counters) -> str:
    if not counters.estimated_tokens:
        return ""
    return (
        f" ({counters.estimated_tokens} of them estimated by the host: the provider's usage was "
        "missing, not numbers or far below what was sent; see model_calls.usage_note)"
    )


def result_summary(result: RunResult) -> Summary:
    summary = summarise(
        result.run_id, result.status, result.stop_reason, result.counters, result.evidence_count
    )
    summary.data.update(
        sources=result.source_count,
        independent_sources=result.independent_sources,
        open_questions=result.report.open_questions,
        message=result.message,
    )
    return summary


def progress_summary(progress: Progress, run_id: str) -> Summary:
    summary = summarise(
        progress.run_id or run_id,
        progress.status,
        progress.stop_reason,
        progress.counters,
        progress.evidence_count,
    )
    summary.data.update(
        sources=progress.source_count,
        open_questions=progress.open_questions,
        limits=progress.limits.model_dump(),
        seconds_left=progress.seconds_left,
        last_action=progress.last_action,
    )
    if progress.message:  # it could not start: say why
        summary.lines.append(f"Reason: {progress.message}")
        summary.data["message"] = progress.message
    return summary


def closed_summary(run_id: str, status: str, reason: str = "", stop: str = "") -> Summary:
    """A run told without its counters: one that ended (its outcome from its search attributes;
    the counters are in its report), or one no worker answers for."""
    lines = [f"Run: {run_id}", f"Status: {status} | Stop: {stop or '-'}"]
    if reason:
        lines.append(f"Reason: {reason}")
    elif status == RunStatus.RUNNING:
        lines.append("(no worker answered the progress query)")
    else:
        lines.append(f"(its counters and report: `research report {run_id}`)")
    data = {"run_id": run_id, "status": status, "stop_reason": stop or None, "message": reason}
    return Summary(lines, status, data)


async def query_progress(
    handle: WorkflowHandle[Any, Any], within: timedelta = QUERY_TIMEOUT
) -> Progress | None:
    """The run's progress, or None while it cannot answer `within` that time (not started, no
    worker, ...)."""
    try:
        progress: Progress = await handle.query(
            PROGRESS_QUERY, result_type=Progress, rpc_timeout=within
        )
    except (TemporalError, RuntimeError, TimeoutError):  # RPC and query failures alike
        return None
    return progress


class WorkerWatch:
    """Says once when no worker polls the run's task queue: such a run waits, silently, until
    one starts. Asked only while the run's progress query goes unanswered."""

    def __init__(
        self,
        client: Client,
        task_queue: str,
        clock: Callable[[], float] = time.monotonic,
        timeout: timedelta = QUERY_TIMEOUT,
    ) -> None:
        self._client = client
        self._timeout = timeout
        self._task_queue = task_queue
        self._clock = clock
        self._next_check = 0.0
        self.warned = False

    async def check(self, display: Display) -> None:
        if self.warned or self._clock() < self._next_check:
            return
        self._next_check = self._clock() + WORKER_CHECK_SECONDS
        if not await self._polled():
            self.warned = True
            queue = self._task_queue
            display.warn(no_worker_sentence(queue))

    async def _polled(self) -> bool:
        """Whether a worker polled the queue for workflow tasks lately (True when Temporal
        cannot tell: no warning is better than a wrong one)."""
        pollers = await polling_workers(self._client, self._task_queue, self._timeout)
        return pollers is None or bool(pollers)


def no_worker_sentence(task_queue: str, waits: str = "the run") -> str:
    """What a run waits for while no worker polls its task queue, and how to start one."""
    return (
        f"no worker is polling task queue {task_queue}, so {waits} waits until one starts "
        f"(`research worker`, or `python worker.py` with RESEARCH_TASK_QUEUE={task_queue})"
    )


async def polling_workers(
    client: Client, task_queue: str, within: timedelta = QUERY_TIMEOUT
) -> list[str] | None:
    """The identities of the workers that polled `task_queue` for workflow tasks lately (a live
    worker polls at least every minute), or None when Temporal cannot tell `within` that time."""
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    try:
        response = await client.workflow_service.describe_task_queue(request, timeout=within)
    except (TemporalError, RuntimeError, TimeoutError):
        return None
    now = datetime.now(UTC)
    return [
        poller.identity or "a worker"
        for poller in response.pollers
        if now - poller.last_access_time.ToDatetime(tzinfo=UTC) < POLLER_FRESH
    ]


async def follow(
    handle: WorkflowHandle[Any, RunResult],
    *,
    worker: asyncio.Task[None] | None = None,
    display: Display | None = None,
    workers: WorkerWatch | None = None,
) -> Summary:
    """Show the run until it ends on `display` (default: a line per step on stdout), warning
    through `workers` when no worker takes it; return its summary lines."""
    display = display or PlainDisplay(sys.stdout)
    result = asyncio.ensure_future(handle.result())
    watched: set[asyncio.Future[Any]] = {result} | ({worker} if worker else set())
    answered = False  # until a worker answers a query, look for one polling the queue
    try:
        while not result.done():
            if workers is not None and not answered:
                await workers.check(display)
            done, _ = await asyncio.wait(
                watched, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if worker is not None and worker in done and not result.done():
                worker.result()  # raises the worker's own error
                raise CliError("the in-process worker stopped before the run ended")
            if not result.done():
                progress = await query_progress(handle)
                answered = progress is not None
                display.update(progress)
        display.update(await query_progress(handle))  # the steps since the last poll, the last too
        return result_summary(result.result())
    except WorkflowFailureError as failure:
        return await _closed_summary(handle, failure)
    finally:
        display.close()
        result.cancel()


async def _closed_summary(
    handle: WorkflowHandle[Any, Any], failure: WorkflowFailureError
) -> Summary:
    """A run that ended without a result (cancelled, failed, terminated): its last progress, with
    the status Temporal closed it with and the cause (the workflow's own progress still says
    `running` when it failed or was terminated before recording an outcome)."""
    status = "cancelled" if isinstance(failure.cause, CancelledError) else "failed"
    cause = str(failure.cause or failure)
    progress = await query_progress(handle)
    if progress is None:
        return closed_summary(handle.id, status, cause)
    summary = progress_summary(progress, handle.id)
    if progress.status is not RunStatus.RUNNING:
        return summary
    # It never recorded an outcome: say how it closed, and why.
    lines = [*summary.lines, f"Reason: {cause}"]
    lines[1] = f"Status: {status} | Stop: -"
    return Summary(lines, status, {**summary.data, "status": status, "message": cause})

"""Following a run: one line per new step while it runs, then the DESIGN.md summary."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError, TemporalError

from starter import summary
from starter.errors import CliError
from starter.live import Display, PlainDisplay
from starter.live import step_line as step_line  # where the step lines were first defined
from starter.pollers import NO_WORKER_CHECK as NO_WORKER_CHECK
from starter.pollers import no_worker_sentence as no_worker_sentence
from starter.pollers import polling_workers as polling_workers
from starter.status import PROGRESS_QUERY as PROGRESS_QUERY
from starter.summary import STATUS_SCHEMA as STATUS_SCHEMA
from starter.summary import Summary as Summary
from starter.summary import closed_summary as closed_summary
from starter.summary import in_schema as in_schema
from workflows.models import Counters, Progress, RunResult, RunStatus, StopReason

POLL_SECONDS = 0.5
QUERY_TIMEOUT = timedelta(seconds=5)
WORKER_CHECK_SECONDS = 5.0


def summarise(
    run_id: str,
    status: RunStatus | str,
    stop_reason: StopReason | str | None,
    counters: Counters,
    evidence: int,
) -> Summary:
    return summary.counted(
        {
            "run_id": run_id,
            "status": str(status),
            "stop_reason": str(stop_reason) if stop_reason else None,
            "counters": counters.model_dump(mode="json"),
            "evidence": evidence,
        }
    )


def result_summary(result: RunResult) -> Summary:
    return summary.result_summary(result.model_dump(mode="json"))


def progress_summary(progress: Progress, run_id: str) -> Summary:
    return summary.progress_summary(progress.model_dump(mode="json"), run_id)


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

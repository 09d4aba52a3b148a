"""Following a run: one line per new step while it runs, then the DESIGN.md summary."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import CancelledError, TemporalError

from starter.errors import CliError
from workflows.models import Counters, Progress, RunResult, RunStatus, StepNote, StopReason
from workflows.research import ResearchWorkflow

POLL_SECONDS = 0.5
# A step line shows a refused step's whole reason (`describe_step` keeps 200 characters of it);
# only a very long URL of a read is cut.
ACTION_CHARS = 240
QUERY_TIMEOUT = timedelta(seconds=5)


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
        f"Reported tokens: {counters.tokens}",
    ]
    data = {
        "run_id": run_id,
        "status": str(status),
        "stop_reason": str(stop_reason) if stop_reason else None,
        "counters": counters.model_dump(),
        "evidence": evidence,
    }
    return Summary(lines, str(status), data)


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


def closed_summary(run_id: str, status: str, reason: str = "") -> Summary:
    """A run whose outcome no worker can tell (it closed before recording one)."""
    lines = [f"Run: {run_id}", f"Status: {status} | Stop: -"]
    lines.append(f"Reason: {reason}" if reason else "(no worker answered the progress query)")
    data = {"run_id": run_id, "status": status, "stop_reason": None, "message": reason}
    return Summary(lines, status, data)


def step_line(progress: Progress, note: StepNote) -> str:
    """`step 3/20  read S2 docs.harborq.example/... (6 passages)`"""
    steps = f"step {note.step}/{progress.limits.max_steps}"
    action = note.action or "-"
    if len(action) > ACTION_CHARS:
        action = action[: ACTION_CHARS - 3] + "..."
    return f"{steps}  {action}"


async def query_progress(handle: WorkflowHandle[Any, Any]) -> Progress | None:
    """The run's progress, or None while it cannot answer (not started, no worker, ...)."""
    try:
        return await handle.query(ResearchWorkflow.progress, rpc_timeout=QUERY_TIMEOUT)
    except (TemporalError, RuntimeError, TimeoutError):  # RPC and query failures alike
        return None


async def follow(
    handle: WorkflowHandle[Any, RunResult], *, worker: asyncio.Task[None] | None = None
) -> Summary:
    """Print a line per new step until the run ends; return its summary lines."""
    result = asyncio.ensure_future(handle.result())
    watched: set[asyncio.Future[Any]] = {result} | ({worker} if worker else set())
    last_step = -1
    try:
        while not result.done():
            done, _ = await asyncio.wait(
                watched, timeout=POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if worker is not None and worker in done and not result.done():
                worker.result()  # raises the worker's own error
                raise CliError("the in-process worker stopped before the run ended")
            # The last step is shown too when our own worker can answer a query on a closed run.
            if not result.done() or worker is not None:
                last_step = _show_new_step(await query_progress(handle), last_step)
        return result_summary(result.result())
    except WorkflowFailureError as failure:
        return await _closed_summary(handle, failure)
    finally:
        result.cancel()


def _show_new_step(progress: Progress | None, last_step: int) -> int:
    """Print every step taken since the last poll (the query carries the recent ones)."""
    if progress is None:
        return last_step
    for note in progress.recent_steps:
        if note.step > last_step:
            print(step_line(progress, note), flush=True)
            last_step = note.step
    return last_step


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

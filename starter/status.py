"""`research status`, and the look at a run every command on one takes first (does it exist, is
it running, which task queue serves it).

Light by design (bench/cli_startup.py): payloads are read as plain JSON, without pydantic or the
workflow's models, and no worker is asked about a run that has ended.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import SearchAttributeKey
from temporalio.converter import DataConverter
from temporalio.exceptions import TemporalError
from temporalio.service import RPCError, RPCStatusCode

from runtime.settings import Settings
from runtime.temporal import connect
from starter.errors import CliError, no_such_run
from starter.pollers import NO_WORKER_CHECK, no_worker_sentence, polling_workers
from starter.summary import RUNNING, Summary, closed_summary, progress_summary, result_summary

# The workflow's query and search attributes, by name (tests/unit/test_cli_startup.py keeps them
# the workflow's own).
PROGRESS_QUERY = "progress"
STATUS_ATTRIBUTE = SearchAttributeKey.for_keyword("ResearchStatus")
STOP_REASON_ATTRIBUTE = SearchAttributeKey.for_keyword("ResearchStopReason")


@dataclass(frozen=True)
class ExistingRun:
    """A run Temporal knows: its handle, its state (`running`, `completed`, ...), the task queue
    its workers poll and its own outcome as its search attributes hold it."""

    client: Client
    handle: WorkflowHandle[Any, Any]
    state: str
    task_queue: str
    outcome: tuple[str, str] | None = None  # ResearchStatus, ResearchStopReason ("" for none)


async def status(settings: Settings, args: argparse.Namespace) -> int:
    run = await existing_run(settings, args.id, DataConverter.default)
    summary = await run_summary(run)
    print(json.dumps(summary.json_data(), indent=2) if args.json else summary.text())
    return 0


async def existing_run(
    settings: Settings, run_id: str, data_converter: DataConverter | None = None
) -> ExistingRun:
    """The run `run_id` (no such run is a one-sentence error, exit 2), through a client with
    `data_converter` (default: pydantic payloads, for a command that sends the workflow's
    models)."""
    client = await connect(settings, data_converter=data_converter)
    handle = client.get_workflow_handle(run_id)
    try:
        description = await handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise no_such_run(run_id) from None
        raise
    state = description.status.name.lower() if description.status else "unknown"
    attributes = description.typed_search_attributes
    status = attributes.get(STATUS_ATTRIBUTE)
    outcome = (status, attributes.get(STOP_REASON_ATTRIBUTE) or "") if status else None
    return ExistingRun(client, handle, state, description.task_queue, outcome)


async def refuse_ended(run: ExistingRun) -> None:
    """A run that can still be steered passes; an ended one is a one-sentence error."""
    if run.state == RUNNING:
        return
    # The run's own outcome (`incomplete`, ...), not Temporal's word for a closed workflow.
    summary = await run_summary(run)
    stop = summary.data.get("stop_reason")
    ended = f"{summary.status}, {stop}" if stop else summary.status
    raise CliError(f"run {run.handle.id} has already ended ({ended}): it can no longer change")


async def run_summary(run: ExistingRun) -> Summary:
    """The run's summary, asking no worker for a run that has ended, and a worker for a running
    one only when one polls its task queue (the answer bounded by NO_WORKER_CHECK)."""
    handle, state = run.handle, run.state
    if state == "completed":  # the workflow's result, from the server
        return result_summary(_data(await handle.result()))
    if state != RUNNING:  # its own outcome, as the workflow last set its search attributes
        status, stop = run.outcome or (RUNNING, "")
        if status != RUNNING:
            return closed_summary(handle.id, status, stop=stop)
        # Closed before it recorded an outcome (an invalid brief, terminated, ...): why.
        return closed_summary(handle.id, _ended(state), reason=await _closing_cause(handle))
    if await polling_workers(run.client, run.task_queue, NO_WORKER_CHECK) == []:
        return closed_summary(handle.id, RUNNING, reason=no_worker_sentence(run.task_queue))
    try:
        progress = await handle.query(PROGRESS_QUERY, rpc_timeout=NO_WORKER_CHECK)
    except (TemporalError, RuntimeError, TimeoutError):  # RPC and query failures alike
        return closed_summary(handle.id, RUNNING)
    return progress_summary(_data(progress), handle.id)


def _data(payload: Any) -> dict[str, Any]:
    """A payload as JSON data, whichever converter read it (a model with the pydantic one)."""
    if hasattr(payload, "model_dump"):
        data: dict[str, Any] = payload.model_dump(mode="json")
        return data
    return dict(payload)


async def _closing_cause(handle: WorkflowHandle[Any, Any]) -> str:
    """Why Temporal closed a run that ended without a result, from its close event."""
    try:
        await handle.result()
    except WorkflowFailureError as failure:
        cause = failure.cause or failure
        return getattr(cause, "message", None) or str(cause)
    return ""


def _ended(state: str) -> str:
    """Temporal's closed states in this project's spelling (DESIGN.md, Outcomes)."""
    return {"canceled": "cancelled", "timed_out": "timed out"}.get(state, state)

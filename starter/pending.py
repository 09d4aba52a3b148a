"""Runs Temporal knows that the ledger does not yet: started, but no worker has taken them.

A run reaches the ledger with its first activity (`start_run`); until a worker takes it, only
Temporal knows it. `research runs` lists such runs as `pending` beside the ledger's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

from runtime.settings import Settings

ASK_SECONDS = (
    2.0  # Temporal that does not answer by then is not waited for: the ledger's list stands
)


@dataclass(frozen=True)
class PendingRun:
    run_id: str
    question: str
    started_at: datetime


async def pending_runs(
    settings: Settings, in_ledger: Callable[[str], Awaitable[bool]], limit: int
) -> list[PendingRun]:
    """The running research runs on this task queue that the ledger lacks, newest first (none
    when Temporal does not answer within ASK_SECONDS: `research runs` reads the ledger first)."""
    try:
        async with asyncio.timeout(ASK_SECONDS):
            return await _pending(settings, in_ledger, limit)
    except (TimeoutError, RuntimeError):  # no server there (the SDK's connect error is bare)
        return []


async def _pending(
    settings: Settings, in_ledger: Callable[[str], Awaitable[bool]], limit: int
) -> list[PendingRun]:
    from temporalio.service import RPCError

    from runtime.temporal import connect

    client = await connect(settings)
    queue = settings.task_queue.replace("'", "\\'")
    query = (
        "WorkflowType = 'ResearchWorkflow' AND ExecutionStatus = 'Running' "
        f"AND TaskQueue = '{queue}'"
    )
    pending = []
    try:
        async for execution in client.list_workflows(query, limit=limit):
            if await in_ledger(execution.id):
                continue
            handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
            question = await (await handle.describe()).static_summary() or ""
            pending.append(PendingRun(execution.id, question, execution.start_time))
    except RPCError:  # a server without this visibility query: the ledger's list stands
        return []
    return pending

"""Whether a worker polls a task queue: a run whose queue no worker polls waits, silently, until
one starts, so the commands that wait on a run say so. Light (no workflow models): `research
status` asks it too."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.exceptions import TemporalError

# Temporal lists a worker's poller for minutes after its last poll; a live worker polls again at
# least every minute (a long poll), so an older poll is a worker that went away.
POLLER_FRESH = timedelta(seconds=75)
# How long a command waits to learn whether a worker polls a queue before it says none does.
NO_WORKER_CHECK = timedelta(seconds=2)
ASK_TIMEOUT = timedelta(seconds=5)


def no_worker_sentence(task_queue: str, waits: str = "the run") -> str:
    """What a run waits for while no worker polls its task queue, and how to start one."""
    return (
        f"no worker is polling task queue {task_queue}, so {waits} waits until one starts "
        f"(`research worker`, or `python worker.py` with RESEARCH_TASK_QUEUE={task_queue})"
    )


async def polling_workers(
    client: Client, task_queue: str, within: timedelta = ASK_TIMEOUT
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

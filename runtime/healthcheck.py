"""Container health check: is a worker on this host polling the task queue?

`python -m runtime.healthcheck` (the compose worker's health check) asks Temporal which workers
poll RESEARCH_TASK_QUEUE and exits 0 when one with this host's name (the SDK's default identity is
`<pid>@<hostname>`, and a container's hostname is its own) polls for both workflow and activity
tasks, 1 with one sentence otherwise. Temporal lists a poller for a few minutes after its last
poll, so a worker that died shows as unhealthy after that long.
"""

from __future__ import annotations

import asyncio
import socket
import sys

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError

from runtime.settings import Settings, SettingsError

TIMEOUT_SECONDS = 10.0
# A short-lived client process can abort at exit while the SDK core finishes a callback
# (temporalio/sdk-python#300, see runtime.temporal.settle_before_exit): give it a moment.
SETTLE_SECONDS = 0.2
_KINDS = {
    "workflow": TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    "activity": TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
}


async def missing_pollers(client: Client, task_queue: str, host: str) -> list[str]:
    """The task kinds (`workflow`, `activity`) no worker on `host` polls `task_queue` for."""
    missing = []
    for name, kind in _KINDS.items():
        response = await client.workflow_service.describe_task_queue(
            DescribeTaskQueueRequest(
                namespace=client.namespace,
                task_queue=TaskQueue(name=task_queue),
                task_queue_type=kind,
            )
        )
        if not any(poller.identity.endswith(f"@{host}") for poller in response.pollers):
            missing.append(name)
    return missing


async def check(settings: Settings, host: str) -> str | None:
    """None when healthy, else what is wrong in one sentence."""
    try:
        client = await Client.connect(
            settings.temporal_address,
            namespace=settings.temporal_namespace,
            api_key=settings.temporal_api_key,
            tls=bool(settings.temporal_api_key),
        )
        missing = await missing_pollers(client, settings.task_queue, host)
    except (RuntimeError, RPCError) as error:  # cannot connect; Temporal refused the request
        return f"cannot ask Temporal at {settings.temporal_address}: {error}"
    finally:
        await asyncio.sleep(SETTLE_SECONDS)
    if missing:
        kinds = " and ".join(missing)
        return f"no worker on {host} polls task queue {settings.task_queue} for {kinds} tasks"
    return None


def main() -> int:
    try:
        settings = Settings.from_env()
        checking = check(settings, socket.gethostname())
        problem = asyncio.run(asyncio.wait_for(checking, TIMEOUT_SECONDS))
    except SettingsError as error:
        problem = str(error)
    except TimeoutError:
        problem = f"Temporal did not answer within {TIMEOUT_SECONDS:.0f} s"
    if problem:
        print(f"unhealthy: {problem}", file=sys.stderr)
        return 1
    print("healthy")
    return 0


if __name__ == "__main__":
    sys.exit(main())

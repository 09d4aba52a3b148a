"""The least a step with a real model can be in Temporal: one regular activity (the model's
call, answered after a wait) and one local activity (the tool), in one workflow task, and
nothing else: no ledger, payloads of a few bytes. `bench.temporal_floor` runs it on a worker of
its own, `python -m bench.floor_workflow ADDRESS`: the SDK with worker.py's slots and pollers,
and not the application (its clients, telemetry and data converter), so the floor is the SDK's
alone. The sandbox imports this module: it imports the SDK and those numbers only."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

from runtime.slots import ACTIVITY_SLOTS, POLLERS, WORKFLOW_TASK_SLOTS

TASK_QUEUE = "bench-floor"
READY = "floor worker ready"


@activity.defn(name="floor_model")
async def model_call(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "tool"


@activity.defn(name="floor_tool")
async def tool_call(step: int) -> int:
    return step


@workflow.defn(name="FloorSteps")
class FloorSteps:
    @workflow.run
    async def run(self, steps: int, seconds: float) -> int:
        for step in range(steps):
            await workflow.execute_activity(
                model_call, seconds, start_to_close_timeout=timedelta(seconds=60)
            )
            await workflow.execute_local_activity(
                tool_call, step, start_to_close_timeout=timedelta(seconds=10)
            )
        return steps


async def serve(address: str) -> None:
    """Poll the floor's task queue until killed, as worker.py polls its own."""
    client = await Client.connect(address)
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[FloorSteps],
        activities=[model_call, tool_call],
        max_concurrent_activities=ACTIVITY_SLOTS,
        max_concurrent_local_activities=ACTIVITY_SLOTS,
        max_concurrent_workflow_tasks=WORKFLOW_TASK_SLOTS,
        max_concurrent_activity_task_polls=POLLERS,
        max_concurrent_workflow_task_polls=POLLERS,
    )
    async with worker:
        print(READY, flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1]))

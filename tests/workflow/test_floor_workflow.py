"""bench.temporal_floor's workflow: each step one regular and one local activity in one workflow
task, as many steps as asked (the floor it measures is this shape, nothing more)."""

from __future__ import annotations

import uuid

from temporalio.client import Client
from temporalio.worker import Worker

from bench.floor_workflow import FloorSteps, model_call, tool_call


async def test_each_step_is_one_activity_and_one_local_activity_in_one_task(
    client: Client,
) -> None:
    queue = f"floor-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client, task_queue=queue, workflows=[FloorSteps], activities=[model_call, tool_call]
    ):
        handle = await client.start_workflow(
            FloorSteps.run, args=[3, 0.0], id=f"floor-{uuid.uuid4().hex}", task_queue=queue
        )
        assert await handle.result() == 3
        events = [event async for event in handle.fetch_history_events()]
    kinds = [event.WhichOneof("attributes") for event in events]
    assert kinds.count("activity_task_scheduled_event_attributes") == 3
    assert kinds.count("marker_recorded_event_attributes") == 3
    # the first task schedules the first call; each call's result is one task more
    assert kinds.count("workflow_task_completed_event_attributes") == 3 + 1

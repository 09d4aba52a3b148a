"""The least a step with a real model can be in Temporal: one regular activity (the model's
call, answered after a wait) and one local activity (the tool), in one workflow task, and
nothing else: no ledger, payloads of a few bytes. `bench.temporal_floor` runs it; the sandbox
imports this module, so it imports the SDK alone."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow


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

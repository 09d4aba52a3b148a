"""Heartbeats while an activity waits (a model, a search provider, a page), so a lost worker is
noticed within the workflow's few-second heartbeat timeout instead of the activity's whole
start-to-close timeout. Local activities cannot heartbeat: a lost worker there fails its workflow
task, which another worker retries.

The first beat comes after HEARTBEAT_SECONDS, not at the start: the heartbeat timeout runs from
the start until a first beat, so a lost worker is noticed as soon either way, and an activity
done within the interval (a model answering in a second) sends none. Measured: one heartbeat
(an RPC the Temporal server writes) per model call was a share of the server's CPU per step."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

# Beats every 2 s against the workflow's heartbeat timeout (workflows.calling.HEARTBEAT, 8 s); the
# SDK sends at most one per 80 % of the timeout, so no beat is wasted on the wire.
HEARTBEAT_SECONDS = 2.0


@contextlib.asynccontextmanager
async def heartbeating(every: float = HEARTBEAT_SECONDS) -> AsyncIterator[None]:
    if not activity.in_activity() or activity.info().is_local:
        yield
        return

    async def beat() -> None:
        while True:
            await asyncio.sleep(every)
            activity.heartbeat()

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

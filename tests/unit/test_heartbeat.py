"""activities.heartbeat: an activity beats while it waits, first after the interval."""

from __future__ import annotations

import asyncio

from temporalio.testing import ActivityEnvironment

from activities.heartbeat import heartbeating


async def _waits(turns: int, every: float) -> None:
    async with heartbeating(every):
        for _ in range(turns):
            await asyncio.sleep(0)


async def test_an_activity_done_within_the_interval_sends_no_heartbeat() -> None:
    beats: list[tuple[object, ...]] = []
    environment = ActivityEnvironment()
    environment.on_heartbeat = lambda *details: beats.append(details)

    await environment.run(_waits, 5, 3600.0)

    assert beats == []  # the beat waits its interval first: no RPC for a quick call


async def test_an_activity_that_waits_longer_beats() -> None:
    beat = asyncio.Event()
    environment = ActivityEnvironment()
    environment.on_heartbeat = lambda *details: beat.set()

    async def waits_long() -> None:
        async with heartbeating(0.0):
            await beat.wait()  # ends once a beat came: no clock is read

    await asyncio.wait_for(environment.run(waits_long), 30)

    assert beat.is_set()

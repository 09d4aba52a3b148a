"""Start-up waits: a worker started while Temporal or PostgreSQL is down, restarting or full tries
again with bounded, logged back-off (RESEARCH_STARTUP_WAIT_SECONDS) before it gives up."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from runtime.names import LOGGER

T = TypeVar("T")

FIRST_PAUSE_SECONDS = 0.5
LONGEST_PAUSE_SECONDS = 5.0

_log = logging.getLogger(f"{LOGGER}.startup")


class GaveUp(Exception):
    """`what` still failed when the wait ran out; `reason` is the last failure's, in words."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"{what}: {reason}")
        self.what = what
        self.reason = reason


async def wait_for(
    what: str,
    attempt: Callable[[], Awaitable[T]],
    *,
    seconds: float,
    reason_to_wait: Callable[[Exception], str | None],
) -> T:
    """`attempt()`'s result, trying again while `reason_to_wait(error)` names a passing condition
    (None: waiting cannot help, the error is raised as it is) and `seconds` have not run out.

    Pauses double from FIRST_PAUSE_SECONDS up to LONGEST_PAUSE_SECONDS; each is logged with its
    reason. Raises GaveUp with the last reason when the wait is over.
    """
    started = time.monotonic()
    pause = FIRST_PAUSE_SECONDS
    while True:
        try:
            return await attempt()
        except Exception as error:
            reason = reason_to_wait(error)
            if reason is None:
                raise
            left = seconds - (time.monotonic() - started)
            if left <= 0:
                raise GaveUp(what, reason) from error
            pause = min(pause, left)
            _log.warning(
                "waiting for %s: %s; trying again in %.1f s (%.1f s left)",
                what,
                reason,
                pause,
                left,
            )
            await asyncio.sleep(pause)
            pause = min(pause * 2, LONGEST_PAUSE_SECONDS)

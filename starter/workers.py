"""`research worker [--processes N]`: N worker processes on the task queue, stopped together.

Each is `worker.py` in a process of its own (its own interpreter: the worker is CPU-bound on one
core at high concurrency). SIGTERM or Ctrl-C is passed on to every one, which drains and exits;
when one exits on its own the others are stopped too, and the exit code is the first non-zero.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from contextlib import suppress

from composition.providers import check_model_settings, check_search_settings
from runtime.settings import PROJECT_ROOT, Settings
from starter.errors import EXIT_USAGE, CliError

MAX_PROCESSES = 32


async def workers(settings: Settings, args: argparse.Namespace) -> int:
    count = args.processes
    if not 1 <= count <= MAX_PROCESSES:
        raise CliError(f"--processes must be 1 to {MAX_PROCESSES}, got {count}", EXIT_USAGE)
    check_model_settings(settings)  # one sentence here, not N tracebacks from the children
    check_search_settings(settings)
    command = [sys.executable, str(PROJECT_ROOT / "worker.py")]
    env = {**os.environ, "RESEARCH_DEBUG": "1"} if args.debug else None  # None: this one's
    children = [await asyncio.create_subprocess_exec(*command, env=env) for _ in range(count)]
    print(f"started {count} worker process(es): {', '.join(str(c.pid) for c in children)}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    waits = [asyncio.create_task(child.wait()) for child in children]
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait([*waits, stopping], return_when=asyncio.FIRST_COMPLETED)
    for child in children:
        if child.returncode is None:
            with suppress(ProcessLookupError):
                child.terminate()  # SIGTERM: each drains its activities, then exits
    codes = await asyncio.gather(*waits)
    stopping.cancel()
    return next((code for code in codes if code not in (0, -signal.SIGTERM)), 0)

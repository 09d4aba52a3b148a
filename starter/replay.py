"""`research replay`: does the current workflow code make the decisions a recorded history made?

Temporal's Replayer runs the history against the workflows the worker registers, with the same
data converter, and reports the first command that differs from the recorded events. Exit codes
for CI: 0 replays cleanly, 1 diverges, 2 could not replay (no such run or file, not a history,
Temporal unreachable).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.worker import Replayer

from runtime.converter import DATA_CONVERTER
from runtime.settings import Settings
from runtime.telemetry import telemetry
from runtime.temporal import TemporalUnavailable
from starter.errors import EXIT_USAGE, CliError
from starter.export import HISTORY, history_files
from starter.history import fetch_histories, read_history_file
from workflows.research import ResearchWorkflow

EXIT_CLEAN = 0
EXIT_DIVERGED = 1
EXIT_UNREPLAYABLE = EXIT_USAGE
# The SDK core's own message inside the activation failure it reports.
_CORE_MESSAGE = re.compile(r'message: "((?:[^"\\]|\\.)*)"')


def history_file(target: str) -> Path | None:
    """The JSON file `target` names (an export folder: its history.json); None for a run id."""
    path = Path(target)
    if path.is_dir():
        return path / HISTORY
    return path if target.endswith(".json") or "/" in target or path.is_file() else None


async def load_histories(settings: Settings, target: str) -> list[WorkflowHistory]:
    """From a file (one execution), an export folder (each execution it holds), else from the
    server by run id: every execution of the run, oldest first (a run that continued as new
    has several)."""
    path = Path(target)
    if await asyncio.to_thread(path.is_dir):
        files = await asyncio.to_thread(history_files, path)
        return [
            await asyncio.to_thread(read_history_file, file) for file in files or [path / HISTORY]
        ]
    file = await asyncio.to_thread(history_file, target)
    if file is not None:
        return [await asyncio.to_thread(read_history_file, file)]
    try:
        return await fetch_histories(settings, target)
    except TemporalUnavailable as error:
        raise CliError(str(error), EXIT_UNREPLAYABLE) from None


async def replay_history(history: WorkflowHistory) -> str | None:
    """None when the history replays cleanly, else the first divergence in one paragraph."""
    replayer = Replayer(
        workflows=[ResearchWorkflow],  # what worker.py registers, with the client's plugins
        data_converter=DATA_CONVERTER,
        plugins=telemetry().plugins,
        runtime=_quiet_runtime(),
    )
    with _sdk_logs_silenced():
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    if result.replay_failure is None:
        return None
    return divergence(result.replay_failure)


def divergence(failure: BaseException) -> str:
    """The SDK core's message (`[TMPRL1100] Nondeterminism error: ...`) without its wrapping."""
    text = str(failure)
    found = _CORE_MESSAGE.search(text)
    message = found.group(1).replace('\\"', '"').replace("\\\\", "\\") if found else text
    return " ".join(message.split())


async def replay(settings: Settings, args: argparse.Namespace) -> int:
    """Replay each execution's history in turn; the first that diverges is reported."""
    histories = await load_histories(settings, args.target)
    count = len(histories)
    for number, history in enumerate(histories, start=1):
        problem = await replay_history(history)
        if problem is None:
            continue
        which = f" execution {number} of {count}," if count > 1 else ""
        print(
            f"diverges: {history.workflow_id}{which} ({len(history.events)} events) does not "
            f"replay against the current code: {problem}. A running workflow with this history "
            "would fail its next workflow task on it; ship the change as a new build "
            "(docs/operations.md, rolling out a change) so that such runs stay on the build they "
            "started on."
        )
        return EXIT_DIVERGED
    events = sum(len(history.events) for history in histories)
    which = f", {count} executions" if count > 1 else ""
    print(
        f"replays cleanly: {histories[0].workflow_id} ({events} events{which}) against the "
        "current code"
    )
    return EXIT_CLEAN


@functools.cache
def _quiet_runtime() -> Runtime:
    """A runtime whose core logs only errors: the divergence is reported once, by us."""
    logging_config = LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
    return Runtime(telemetry=TelemetryConfig(logging=logging_config))


@contextmanager
def _sdk_logs_silenced() -> Iterator[None]:
    """The SDK logs a failed activation with a traceback; here that is the expected answer."""
    logger = logging.getLogger("temporalio")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)

"""`research start --wait` off a terminal: a line per step, the last one included, then the
outcome; and one warning, without giving up, while no worker polls the run's task queue."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import uuid
from typing import IO

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT
from starter.local import DEMO_BRIEF
from tests.system.conftest import WorkerProcess

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]

NO_WORKER = "warning: no worker is polling task queue"
DEMO_STEPS = [f"step {n}/20  " for n in range(1, 14)]  # the sample brief completes in 13 steps


@pytest.fixture
def env(
    dev_server: WorkflowEnvironment, embedded_pg_url: str, corpus_ledger: Ledger
) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RESEARCH_")}
    environment.update(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-live-{uuid.uuid4().hex[:8]}",
        PYTHONUNBUFFERED="1",
    )
    return environment


def _start(env: dict[str, str]) -> subprocess.Popen[str]:
    run_id = f"research-live-{uuid.uuid4().hex[:8]}"
    return subprocess.Popen(
        [sys.executable, "-m", "starter.cli", "start", str(DEMO_BRIEF), "--id", run_id, "--wait"],
        cwd=PROJECT_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _step_lines(stdout: str) -> list[str]:
    return [
        line[: line.index("  ") + 2] for line in stdout.splitlines() if line.startswith("step ")
    ]


def test_every_step_is_a_line_the_last_included_and_no_warning_with_a_worker(
    env: dict[str, str],
) -> None:
    worker = WorkerProcess(env)
    try:
        worker.wait_ready()
        started = _start(env)
        stdout, stderr = started.communicate(timeout=120)
    finally:
        worker.stop()
        assert worker.process.stdout is not None
        worker.process.stdout.close()

    assert started.returncode == 0, stdout + stderr
    assert _step_lines(stdout) == DEMO_STEPS
    lines = stdout.splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("step "))
    assert lines[last] == "step 13/20  finish: the coverage gate passed"
    assert lines[last + 1 : last + 4 : 2] == [
        "",
        "Status: completed: rules only, meaning not checked | Stop: coverage_gate_passed",
    ]
    assert "Steps: 13 |" in stdout
    assert NO_WORKER not in stderr


def test_without_a_worker_it_warns_once_and_keeps_waiting_for_one(env: dict[str, str]) -> None:
    started = _start(env)
    assert started.stdout is not None and started.stderr is not None
    output, errors = _Lines(started.stdout), _Lines(started.stderr)
    try:
        # The first thing said on stderr (the CLI starts, connects, checks: slow on a loaded host).
        warning = errors.next(timeout=90)
        assert warning.startswith(f"{NO_WORKER} {env['RESEARCH_TASK_QUEUE']}, so the run waits")
        assert started.poll() is None  # still waiting

        worker = WorkerProcess(env)  # a worker comes: the run goes on, nothing to do again
        try:
            worker.wait_ready()
            started.wait(timeout=120)
        finally:
            worker.stop()
            assert worker.process.stdout is not None
            worker.process.stdout.close()
    finally:
        if started.poll() is None:
            started.kill()
            started.wait()
        stdout, said = output.rest(), errors.rest()

    assert started.returncode == 0, stdout + said
    assert _step_lines(stdout) == DEMO_STEPS
    assert said == ""  # the warning was said once


class _Lines:
    """The lines of a child's pipe as they come, read by a thread (a read must not block)."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._stream = stream
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        for line in self._stream:
            self._lines.put(line)

    def next(self, timeout: float) -> str:
        return self._lines.get(timeout=timeout)

    def rest(self) -> str:
        """Everything not taken yet, once the child has ended (the pipe is closed then)."""
        self._thread.join(timeout=10)
        self._stream.close()
        taken = []
        while not self._lines.empty():
            taken.append(self._lines.get())
        return "".join(taken)

"""`python -m runtime.healthcheck`, the compose worker's health check, against a real dev server."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest

from runtime.healthcheck import check
from runtime.settings import PROJECT_ROOT, Settings
from tests.system.conftest import WorkerProcess

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]


def _healthcheck(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runtime.healthcheck"],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


async def test_healthy_only_while_a_worker_on_this_host_polls_the_task_queue(
    worker_env: dict[str, str], spawn_worker: type[WorkerProcess]
) -> None:
    settings = Settings.from_env(worker_env)
    host, queue = socket.gethostname(), settings.task_queue

    before = _healthcheck(worker_env)  # the command a container runs
    assert before.returncode == 1
    assert before.stderr.strip() == (
        f"unhealthy: no worker on {host} polls task queue {queue} for workflow and activity tasks"
    )

    spawn_worker().wait_ready()
    # Temporal shows a new worker's pollers a moment after its ready line (a container's health
    # check is retried the same way): ask again for up to 10 s before judging.
    after = _healthcheck(worker_env)
    for _ in range(20):
        if after.returncode == 0:
            break
        await asyncio.sleep(0.5)
        after = _healthcheck(worker_env)
    assert (after.returncode, after.stdout.strip()) == (0, "healthy")
    # A worker elsewhere does not make this host healthy.
    assert await check(settings, "another-host") == (
        f"no worker on another-host polls task queue {queue} for workflow and activity tasks"
    )


def test_unreachable_temporal_is_unhealthy_in_one_sentence(worker_env: dict[str, str]) -> None:
    env = {**worker_env, "TEMPORAL_ADDRESS": "127.0.0.1:1"}
    done = _healthcheck(env)

    assert done.returncode == 1
    assert done.stderr.startswith("unhealthy: cannot ask Temporal at 127.0.0.1:1: ")

"""`research worker --processes N`: N worker processes serve one task queue and stop together."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT
from starter.briefs import load_brief
from starter.local import DEMO_BRIEF
from workflows.models import RunStatus
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]


async def test_two_worker_processes_serve_runs_and_stop_on_sigterm(
    dev_client: Client, worker_env: dict[str, str], corpus_ledger: Ledger
) -> None:
    command = [sys.executable, "-m", "starter.cli", "worker", "--processes", "2"]
    parent = subprocess.Popen(  # noqa: ASYNC220 (a test driving a CLI process)
        command, cwd=PROJECT_ROOT, env=worker_env, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    lines = [parent.stdout.readline() for _ in range(3)]
    assert lines[0].startswith("started 2 worker process(es): ")
    assert sum("worker ready on task queue" in line for line in lines) == 2

    queue = worker_env["RESEARCH_TASK_QUEUE"]
    results = [
        await dev_client.execute_workflow(
            ResearchWorkflow.run, load_brief(DEMO_BRIEF), id=f"{queue}-{n}", task_queue=queue
        )
        for n in range(2)
    ]
    assert [result.status for result in results] == [RunStatus.COMPLETED] * 2

    started = time.monotonic()
    parent.send_signal(signal.SIGTERM)
    assert parent.wait(timeout=30) == 0
    assert time.monotonic() - started < 30
    children = [int(pid) for pid in lines[0].split(": ", 1)[1].split(", ")]
    for pid in children:  # both children are gone, not orphaned
        probe = subprocess.run(["kill", "-0", str(pid)], capture_output=True)  # noqa: ASYNC221
        assert probe.returncode != 0
    parent.stdout.close()


def test_a_bad_process_count_is_refused_in_one_sentence(worker_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "starter.cli", "worker", "--processes", "0"],
        cwd=PROJECT_ROOT, env=worker_env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "error: --processes must be 1 to 32, got 0",
    )

"""`research worker --processes N`: N worker processes serve one task queue and stop together."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest
from temporalio.client import Client

from activities.ledger import Ledger
from runtime import temporal
from runtime.settings import PROJECT_ROOT, Settings
from runtime.temporal import start_dev_server
from starter.briefs import load_brief
from starter.local import DEMO_BRIEF
from tests.conftest import free_port
from workflows.models import RunStatus
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]
TOGETHER = 3  # workers started at once on a fresh server


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


async def test_workers_started_together_on_a_fresh_server_all_come_up(
    worker_env: dict[str, str], corpus_ledger: Ledger, tmp_path: Path
) -> None:
    """The first workers of a worker deployment register it together: the server rate-limits the
    deployment's requests ("too many requests issued to Worker Deployment") and each waits that out
    (before, a worker exited, and `research worker` with it, in 16 of 20 rounds of
    `python -m bench.worker_start --together 3`)."""
    fresh = await start_dev_server(  # as `research dev` runs it: its database on disk
        Settings(
            state_dir=tmp_path, temporal_address=f"127.0.0.1:{free_port()}", ui_port=free_port()
        )
    )
    env = worker_env | {"TEMPORAL_ADDRESS": fresh.address}
    command = [sys.executable, "-m", "starter.cli", "worker", "--processes", str(TOGETHER)]
    parent = subprocess.Popen(  # noqa: ASYNC220 (a test driving a CLI process)
        command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        lines = [parent.stdout.readline() for _ in range(TOGETHER + 1)]  # '' once it has exited
        assert sum("worker ready on task queue" in line for line in lines) == TOGETHER, lines
        assert parent.poll() is None
    finally:
        parent.send_signal(signal.SIGTERM)
        parent.wait(timeout=30)
        if parent.stdout is not None:
            parent.stdout.close()
        fresh.stop()


def test_a_bad_process_count_is_refused_in_one_sentence(worker_env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "starter.cli", "worker", "--processes", "0"],
        cwd=PROJECT_ROOT, env=worker_env, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert (done.returncode, done.stderr.strip()) == (
        2,
        "error: --processes must be 1 to 32, got 0",
    )


async def test_a_dev_server_on_an_earlier_state_folder_gets_the_new_search_attributes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The dev server's namespace lives in the state folder's temporal.db; an attribute the
    workflow writes since that folder was made (as ResearchLane was) is added when `research dev`
    starts on it again, so its worker's check passes instead of refusing to start."""
    settings = Settings(
        state_dir=tmp_path, temporal_address=f"127.0.0.1:{free_port()}", ui_port=free_port()
    )
    newest = temporal.SEARCH_ATTRIBUTES[-1]
    monkeypatch.setattr(temporal, "SEARCH_ATTRIBUTES", temporal.SEARCH_ATTRIBUTES[:-1])
    earlier = await start_dev_server(settings)  # the folder as an earlier version left it
    earlier.stop()
    monkeypatch.undo()

    again = await start_dev_server(settings)
    try:
        client = await Client.connect(again.address)
        await temporal.check_search_attributes(client, settings)  # raises when one is missing
        listed = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace="default")
        )
        assert newest.split("=")[0] in listed.custom_attributes
    finally:
        again.stop()

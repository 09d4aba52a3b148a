"""A run started from the Temporal CLI with input that is not a brief: `research status` says it
failed and why, and the worker answers the query without an SDK traceback in its log."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from tests.conftest import installed_binary
from tests.system.conftest import WorkerProcess, cli_env, research

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]


@dataclass(frozen=True)
class Stack:
    env: dict[str, str]
    worker: WorkerProcess


@pytest.fixture(scope="module")
def stack(
    dev_server: WorkflowEnvironment, embedded_pg_url: str, corpus_ledger: Ledger
) -> Iterator[Stack]:
    env = cli_env(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-invalid-{os.getpid()}",
        PYTHONUNBUFFERED="1",
    )
    worker = WorkerProcess(env)
    try:
        worker.wait_ready()
        yield Stack(env, worker)
    finally:
        worker.stop()
        if worker.process.stdout is not None:
            worker.process.stdout.close()


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        (["--input", json.dumps({"question": "x", "allowed_hosts": []})],
         "allowed_hosts is empty: name at least one host the run may read"),
        ([], "the brief must be a JSON object with question and allowed_hosts"),
    ],
)  # fmt: skip
def test_status_of_a_run_whose_input_was_invalid(
    stack: Stack, given: list[str], reason: str
) -> None:
    """Started from the Temporal CLI with a bad (or no) brief: `research status` says failed and
    why, and the worker logs no SDK traceback for the progress query it answered."""
    run_id = f"research-invalid-{uuid.uuid4().hex[:6]}"
    started = subprocess.run(
        [
            installed_binary("temporal"), "workflow", "start", "--type", "ResearchWorkflow",
            "--task-queue", stack.env["RESEARCH_TASK_QUEUE"], "--workflow-id", run_id,
            "--address", stack.env["TEMPORAL_ADDRESS"], *given,
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr

    status = research(stack.env, "status", run_id)
    while "Status: running" in status.stdout:  # the worker has not taken its first task yet
        status = research(stack.env, "status", run_id)

    assert (status.returncode, status.stderr) == (0, "")
    assert status.stdout.splitlines()[1] == "Status: failed | Stop: -"
    assert status.stdout.splitlines()[-1] == f"Reason: {reason}"
    log = "".join(stack.worker.output)
    assert "SDK bug" not in log and "Traceback" not in log, log

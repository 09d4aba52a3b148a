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
from temporalio.api.enums.v1 import EventType
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from starter.local import DEMO_BRIEF
from tests.conftest import installed_binary
from tests.system.conftest import WorkerProcess, cli_env, research
from workflows.tools.read_page import CHECK_SEEDS

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


async def test_a_seed_the_corpus_lacks_is_checked_before_the_first_step(
    stack: Stack, dev_server: WorkflowEnvironment, corpus_ledger: Ledger
) -> None:
    """Started from the Temporal CLI, past `research start`'s check: the run reads its seeds
    once before the first model turn, the one the corpus lacks comes back unreadable (named in
    every model request), and no step is spent on it."""
    run_id = f"research-seeded-{uuid.uuid4().hex[:6]}"
    missing = "https://docs.harborq.example/faq.html"
    readable = "https://docs.harborq.example/guides/dead-letter-queues.html"
    brief = json.loads(DEMO_BRIEF.read_text()) | {"seed_urls": [missing, readable]}
    started = subprocess.run(  # noqa: ASYNC221 (a test driving the Temporal CLI)
        [
            installed_binary("temporal"), "workflow", "start", "--type", "ResearchWorkflow",
            "--task-queue", stack.env["RESEARCH_TASK_QUEUE"], "--workflow-id", run_id,
            "--address", stack.env["TEMPORAL_ADDRESS"], "--input", json.dumps(brief),
        ],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert started.returncode == 0, started.stderr
    handle = dev_server.client.get_workflow_handle(run_id)
    await handle.result()

    events = (await handle.fetch_history()).events
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    assert scheduled[0] == CHECK_SEEDS
    (checked,) = [
        json.loads(event.activity_task_completed_event_attributes.result.payloads[0].data)
        for event in events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
    ][:1]
    assert checked == {
        "unreadable": [{"url": missing, "reason": f"could not be read: HTTP 404 from {missing}"}]
    }
    steps = await corpus_ledger.steps(run_id)
    assert steps and all(missing not in step.arguments for step in steps)
    assert any(readable in step.arguments for step in steps), "the readable seed is read"

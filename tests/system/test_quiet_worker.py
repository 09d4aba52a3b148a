"""A worker stays quiet when a run is cancelled mid-turn or the worker is stopped mid-run: no
traceback, no "Completing activity as failed ... CancelledError", no "Failed to detach context"."""

from __future__ import annotations

import asyncio
import logging
import signal
import uuid

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes.openai_server import FakeOpenAI, harborq_script, serve
from tests.fakes.telemetry_servers import OtlpReceiver
from tests.system.conftest import WorkerProcess, demo_brief
from tests.system.test_audit_loose_ends import held_run
from tests.system.test_hostile_model import brief
from workflows.models import RunResult, RunStatus
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]

HELD_TURN = 4  # the model call in flight when the worker is told to stop
# What the worker printed when a cancel or a shutdown met an activity in flight (issue 25).
NOISE = ("Traceback", "Failed to detach context", "Completing activity as failed", "CancelledError")


async def test_cancelling_a_run_mid_turn_logs_no_traceback(
    dev_client: Client,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)

    run_id, result = await held_run(dev_client, embedded_pg_url, brief(), cancel=True)

    run = await corpus_ledger.run(run_id)
    assert result is None and run is not None and run.status == RunStatus.CANCELLED
    noisy = [
        f"{record.name} {record.levelname}: {record.getMessage()}"
        for record in caplog.records
        if record.exc_info
        or record.levelno >= logging.WARNING
        or any(word in record.getMessage() for word in NOISE)
    ]
    assert noisy == []


@pytest.mark.timeout(240)
@pytest.mark.parametrize("tracing", [False, True], ids=["no-exporter", "otlp"])
async def test_sigterm_of_a_worker_with_a_run_in_flight_logs_no_traceback(
    dev_client: Client,
    corpus_ledger: Ledger,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
    tracing: bool,
) -> None:
    """`python worker.py`, as configured by default and with tracing on (the workflow's spans
    attach and detach OpenTelemetry contexts), gets SIGTERM while the run's model call is in
    flight and outlasts the worker's graceful shutdown: the worker stops without a traceback, a
    "Failed to detach context" or a "Completing activity as failed"; another worker then
    finishes the run."""
    fake = FakeOpenAI(harborq_script)
    fake.hold_turn = HELD_TURN
    run_id = f"quiet-{uuid.uuid4().hex[:8]}"
    with OtlpReceiver() as otlp, serve(fake) as base_url:
        env = {
            **worker_env,
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-test-not-a-secret",
            "RESEARCH_WORKFLOW_CACHE": "0",  # each workflow task evicts the run mid-way too
        }
        if tracing:
            env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url, "OTEL_BSP_SCHEDULE_DELAY": "200"}
        first = spawn_worker(env)
        first.wait_ready()
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, demo_brief(), id=run_id, task_queue=env["RESEARCH_TASK_QUEUE"]
        )
        assert await asyncio.to_thread(fake.held.wait, 60), "the run never reached turn 4"
        first.process.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(first.process.wait, 60)  # past the graceful shutdown
        fake.release.set()

        second = spawn_worker(env)
        second.wait_ready()
        result: RunResult = await asyncio.wait_for(handle.result(), timeout=150)
        second.stop()

    assert code == 0, "".join(first.output)
    assert result.status == RunStatus.COMPLETED, result.message
    assert fake.turns[HELD_TURN] == 2, (
        "turn 4 was in flight at SIGTERM: the next worker asked again"
    )
    assert bool(otlp.collected.spans) == tracing  # with tracing on, the spans were exported
    for worker in (first, second):
        noisy = [line for line in worker.output if any(word in line for word in NOISE)]
        assert noisy == [], "".join(worker.output)

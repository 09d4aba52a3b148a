"""A worker killed with SIGKILL mid-run, and another started: the run finishes without repeating
completed model calls and without duplicate ledger rows, and without waiting out the dead worker's
sticky queue."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta

import psycopg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowHistory

from activities.ledger import Ledger
from tests.fakes.openai_server import FakeOpenAI, harborq_script, serve
from tests.system.conftest import WorkerProcess, demo_brief
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

HELD_TURN = 4  # the model call in flight when the worker dies
# The SDK's default sticky schedule-to-start timeout, which a run used to wait out on the dead
# worker's sticky queue after each activity retried elsewhere (worker.STICKY_TIMEOUT: 1 s).
SDK_STICKY_TIMEOUT = timedelta(seconds=10)
HEARTBEAT_LEAD = 1.5  # seconds between the held call's heartbeat and the kill (beats every 2 s)


@pytest.mark.timeout(240)
async def test_sigkilled_worker_resumes_without_repeating_model_calls(
    dev_client: Client,
    corpus_ledger: Ledger,
    embedded_pg_url: str,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
) -> None:
    fake = FakeOpenAI(harborq_script)
    fake.hold_turn = HELD_TURN
    brief = demo_brief()
    run_id = f"crash-{uuid.uuid4().hex[:8]}"
    with serve(fake) as base_url:
        env = {
            **worker_env,
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-test-not-a-secret",
        }
        first = spawn_worker(env)
        first.wait_ready()
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, brief, id=run_id, task_queue=env["RESEARCH_TASK_QUEUE"]
        )
        held = await asyncio.to_thread(fake.held.wait, 60)
        assert held, "the run never reached the held model call"
        second = spawn_worker(env)  # up before the kill: the retry and the run's next task are its
        second.wait_ready()
        await _kill_just_after_a_poll(handle, first)
        fake.release.set()
        result: RunResult = await asyncio.wait_for(handle.result(), timeout=150)
        history = await handle.fetch_history()

    assert result.status == RunStatus.COMPLETED, result.message
    assert result.stop_reason == StopReason.COVERAGE_GATE_PASSED
    completed_before_kill = range(1, HELD_TURN)
    assert all(fake.turns[turn] == 1 for turn in completed_before_kill), fake.turns
    assert fake.turns[HELD_TURN] == 2, "the in-flight call is retried once by the new worker"
    assert all(count == 1 for turn, count in fake.turns.items() if turn > HELD_TURN)
    assert result.counters.model_calls == max(fake.turns)
    _assert_ledger_has_no_duplicates(embedded_pg_url, run_id, result)
    _assert_next_task_not_held(history, f"{second.process.pid}@")


async def _kill_just_after_a_poll(
    handle: WorkflowHandle[ResearchWorkflow, RunResult], worker: WorkerProcess
) -> None:
    """SIGKILL `worker` as a busy worker dies: its sticky queue polled a moment ago (a query it
    answers), the held call's last heartbeat a little earlier. Temporal counts a sticky queue polled
    within 10 s as alive, so the retried call completes inside that window and the run's next
    workflow task is sent to the dead worker's sticky queue, as most kills under load meet it."""
    while True:  # the held call's first heartbeat reached the server
        description = await handle.describe()
        pending = description.raw_description.pending_activities
        if pending and pending[0].HasField("last_heartbeat_time"):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(HEARTBEAT_LEAD)
    await handle.query(ResearchWorkflow.progress)
    worker.kill()


def _assert_next_task_not_held(history: WorkflowHistory, survivor: str) -> None:
    """The workflow task after the retried decide starts on the surviving worker well before the
    SDK's default sticky timeout would have let it leave the dead worker's sticky queue."""
    events = list(history.events)
    retried = next(
        index
        for index, event in enumerate(events)
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED
        and event.activity_task_started_event_attributes.attempt == 2
    )
    completed = next(
        event
        for event in events[retried:]
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
    )
    task = next(
        event
        for event in events[retried:]
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
        and event.event_id > completed.event_id
    )
    assert task.workflow_task_started_event_attributes.identity.startswith(survivor)
    waited = task.event_time.ToDatetime() - completed.event_time.ToDatetime()
    assert waited < SDK_STICKY_TIMEOUT / 2, f"the next workflow task waited {waited}"


def _assert_ledger_has_no_duplicates(url: str, run_id: str, result: RunResult) -> None:
    counts = {}
    with psycopg.connect(url) as connection:
        for table, key in (
            ("model_calls", "turn"),
            ("steps", "step"),
            ("sources", "source_id"),
            ("evidence", "evidence_id"),
            ("searches", "step"),
        ):
            counts[table] = connection.execute(
                f"SELECT count(*), count(DISTINCT {key}) FROM research.{table} WHERE run_id = %s",
                (run_id,),
            ).fetchone()
    assert counts["model_calls"] == (result.counters.model_calls,) * 2
    assert counts["steps"] == (result.counters.steps,) * 2
    assert counts["sources"] == (result.source_count,) * 2
    assert counts["evidence"] == (result.evidence_count,) * 2
    assert counts["searches"] == (result.counters.searches,) * 2

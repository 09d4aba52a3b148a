"""A worker killed with SIGKILL mid-run, and another started: the run finishes without repeating
completed model calls and without duplicate ledger rows."""

from __future__ import annotations

import asyncio
import uuid

import psycopg
import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes.openai_server import FakeOpenAI, harborq_script, serve
from tests.system.conftest import WorkerProcess, demo_brief
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

HELD_TURN = 4  # the model call in flight when the worker dies


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
        first.kill()
        fake.release.set()

        second = spawn_worker(env)
        second.wait_ready()
        result: RunResult = await asyncio.wait_for(handle.result(), timeout=150)

    assert result.status == RunStatus.COMPLETED, result.message
    assert result.stop_reason == StopReason.COVERAGE_GATE_PASSED
    completed_before_kill = range(1, HELD_TURN)
    assert all(fake.turns[turn] == 1 for turn in completed_before_kill), fake.turns
    assert fake.turns[HELD_TURN] == 2, "the in-flight call is retried once by the new worker"
    assert all(count == 1 for turn, count in fake.turns.items() if turn > HELD_TURN)
    assert result.counters.model_calls == max(fake.turns)
    _assert_ledger_has_no_duplicates(embedded_pg_url, run_id, result)


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

"""One model timeout: RESEARCH_MODEL_TIMEOUT_SECONDS bounds a whole model call, and the workflow's
decide timeout follows from it. A model slower than the old fixed 120 s, within the configured
timeout, is asked once: the real worker, the real `openai` client, a real slow local server.

The time-skipping test server cannot stand in for the wait: it skips no time while an activity
runs (measured: `env.sleep(4)` took 4.3 s of real time with an activity outstanding), so this
test waits the 125 s for real.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from runtime.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve, tool
from tests.system.conftest import demo_brief
from worker import run_worker
from workflows.models import Limits, RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

SLOW_SECONDS = 125.0  # longer than the old fixed decide timeout (120 s)

pytestmark = [pytest.mark.system, pytest.mark.timeout(400)]


async def test_a_model_slower_than_120_s_within_its_timeout_is_asked_once(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    def script(turn: int, messages: list[Message]) -> Reply:
        reply: dict[str, Any] = tool("search_web", query="dead-letter queue delivery attempts")
        return {**reply, "delay": SLOW_SECONDS} if turn == 1 else reply

    brief = demo_brief().model_copy(update={"limits": Limits(max_steps=2, deadline_seconds=600)})
    fake = FakeOpenAI(script)
    with serve(fake) as base_url:
        settings = Settings.from_env(
            {
                "DATABASE_URL": embedded_pg_url,
                "OPENAI_BASE_URL": base_url,
                "OPENAI_API_KEY": "sk-slow-model-0123456789",
                "RESEARCH_MODEL_TIMEOUT_SECONDS": "200",
                "RESEARCH_TASK_QUEUE": f"slow-{uuid.uuid4().hex[:8]}",
                "RESEARCH_LANE": "agent",  # the script plays agent turns
            }
        )
        stop, ready = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(run_worker(settings, dev_client, stop=stop, ready=ready))
        await asyncio.wait_for(ready.wait(), 30)
        try:
            result: RunResult = await dev_client.execute_workflow(
                ResearchWorkflow.run,
                brief,
                id=f"slow-{uuid.uuid4().hex[:8]}",
                task_queue=settings.task_queue,
            )
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)

    assert fake.turns[1] == 1, "the slow turn was asked once, not again after 120 s"
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert (result.counters.steps, result.counters.model_calls) == (2, 2)

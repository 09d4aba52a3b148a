"""A worker killed with SIGKILL in each lane and at the hand-over between them, and another
started: the run completes without asking any completed model call again (the composing call,
the agent's turns), with one ledger row per step and the fixed lane's pages fetched once."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections import Counter

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, composing, serve, tool, turn_of
from tests.fakes.openai_server import harborq_compose as compose_reply
from tests.system.conftest import WorkerProcess, demo_brief
from tests.system.test_hostile_model import rows
from tests.system.test_lanes import FINISH
from tests.system.test_worker_crash import _kill_just_after_a_poll
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system]


class Held:
    """The scripted model (compose, then two agent turns), holding the first request of one kind
    until released; every request counted by kind and turn (a retry is the same turn again)."""

    def __init__(self, hold: str) -> None:
        self.hold = hold
        self.asked: Counter[tuple[str, int]] = Counter()
        self.held = threading.Event()
        self.release = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, turn: int, messages: list[Message]) -> Reply:
        kind = self.kind(messages)
        with self.lock:
            self.asked[(kind, turn_of(messages))] += 1
            first = self.asked[(kind, turn_of(messages))] == 1
        if first and kind == self.hold:
            self.held.set()
            self.release.wait(timeout=90)
        if kind == "compose":
            return compose_reply(messages, stray=True)  # refused: the run escalates
        if kind == "agent 1":
            return tool("read_page", source_id="S1")  # a stored page: no fetch
        return FINISH

    @staticmethod
    def kind(messages: list[Message]) -> str:
        if composing(messages):
            return "compose"
        last = next(m for m in reversed(messages) if m.get("role") == "assistant")
        called = last.get("tool_calls") or [{}]
        return (
            "agent 1"
            if called[0].get("function", {}).get("name") == "finish_research"
            else ("agent 2")
        )


@pytest.mark.timeout(300)
@pytest.mark.parametrize("hold", ["compose", "agent 1", "agent 2"])
async def test_a_worker_killed_in_either_lane_or_at_the_hand_over_repeats_no_model_call(
    dev_client: Client,
    corpus_ledger: Ledger,
    embedded_pg_url: str,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
    hold: str,
) -> None:
    model = Held(hold)
    fake = FakeOpenAI(model)
    run_id = f"lanes-crash-{uuid.uuid4().hex[:8]}"
    with serve(fake) as base_url:
        env = {
            **worker_env,
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-test-not-a-secret",
            "RESEARCH_LANE": "auto",
        }
        first = spawn_worker(env)
        first.wait_ready()
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, demo_brief(), id=run_id, task_queue=env["RESEARCH_TASK_QUEUE"]
        )
        assert await asyncio.to_thread(model.held.wait, 60), f"the run never reached {hold}"
        second = spawn_worker(env)
        second.wait_ready()
        await _kill_just_after_a_poll(handle, first)
        model.release.set()
        result: RunResult = await asyncio.wait_for(handle.result(), timeout=200)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    ), result.message
    assert result.lanes == ["fixed", "agent"]
    kinds = [kind for kind, _ in model.asked]
    assert kinds == ["compose", "agent 1", "agent 2"], model.asked
    # The held call was in flight when its worker died: asked once more. Every other, once.
    assert {key: count for key, count in model.asked.items() if key[0] != hold} == {
        key: 1 for key in model.asked if key[0] != hold
    }
    assert [count for key, count in model.asked.items() if key[0] == hold] == [2]
    assert result.counters.model_calls == 3
    sources = rows(embedded_pg_url, "SELECT url FROM research.sources WHERE run_id = %s", run_id)
    assert len(sources) == len({row["url"] for row in sources}) == result.counters.page_fetches
    steps = rows(embedded_pg_url, "SELECT step FROM research.steps WHERE run_id = %s", run_id)
    assert sorted(row["step"] for row in steps) == list(range(1, result.counters.steps + 1))
    calls = rows(embedded_pg_url, "SELECT turn FROM research.model_calls WHERE run_id = %s", run_id)
    assert sorted(row["turn"] for row in calls) == [1, 2, 3]
    assert json.dumps(result.escalation).startswith('"the report was refused')

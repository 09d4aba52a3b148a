"""Recorded real-model runs (tests/cassettes) played back against the current host: a fake
OpenAI-compatible server serves each cassette's tool calls in order, the real worker runs them on
the demo corpus, and the test asserts the outcome, the steps refused and why (outcome.json, re-cut
by `python -m tests.cassettes.recut` when a rule changes on purpose), and what must hold whatever
the cut: a careful model's honest work is not refused for it."""

from __future__ import annotations

import os
from typing import Any

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from tests import cassettes
from tests.fakes.openai_server import Message, Reply
from tests.system.test_hostile_model import BRIEF, hostile_worker, steps
from workflows.models import Limits, RunResult
from workflows.research import ResearchWorkflow

# As the recorded runs had them (the model answered slowly); no verifier, as then.
LIMITS = Limits(max_steps=30, deadline_seconds=3_600)
EXHAUSTED = "the cassette holds no more recorded calls"
# Refusals of honest steps that the recordings showed and the gate no longer makes.
FALSE_REFUSALS = ["third-party", "2023 blog, 1.4"]
# What must hold whatever the cut: the conflict run completes once it discloses the conflict.
COMPLETES = {"run8-harborq-conflict"}

pytestmark = [pytest.mark.system, pytest.mark.timeout(240)]


def _script(turns: list[list[dict[str, Any]]]) -> Any:
    """The n-th request gets the n-th recorded turn (a refused step is a turn too); past the
    last, a refusal that ends the run at once (the host's answers no longer fit the recording)."""
    asked: list[int] = []

    def script(turn: int, messages: list[Message]) -> Reply:
        asked.append(turn)
        if len(asked) > len(turns):
            return {"status": 400, "error": EXHAUSTED}
        calls = turns[len(asked) - 1]
        return {"tool_calls": [(call["name"], call["arguments"]) for call in calls]}

    return script


async def _play(client: Client, pg_url: str, name: str) -> dict[str, Any]:
    brief = BRIEF.model_copy(update={"limits": LIMITS})
    script = _script(cassettes.calls(name))
    env = {"RESEARCH_VERIFIER_PROVIDER": "off"}
    async with hostile_worker(client, pg_url, script, env=env) as (queue, _):
        result: RunResult = await client.execute_workflow(
            ResearchWorkflow.run, brief, id=f"cassette-{name}-{os.getpid()}", task_queue=queue
        )
    rows = steps(pg_url, result.run_id)
    return {
        "status": str(result.status),
        "stop_reason": str(result.stop_reason),
        "evidence": result.evidence_count,
        "steps": [[row["step"], row["tool"], row["ok"], row["error"] or ""] for row in rows],
        "message": result.message,
    }


@pytest.mark.parametrize("name", cassettes.names())
async def test_a_recorded_run_plays_as_its_cassette_says(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, name: str
) -> None:
    played = await _play(dev_client, embedded_pg_url, name)
    if os.environ.get(cassettes.RECUT):
        cassettes.write_outcome(name, played)
        pytest.skip(f"re-cut tests/cassettes/{name}/outcome.json")
    assert played == cassettes.outcome(name)
    refusals = [error for *_, error in played["steps"] if error]
    assert not [text for text in FALSE_REFUSALS if any(text in said for said in refusals)]
    if name in COMPLETES:
        assert (played["status"], played["stop_reason"]) == ("completed", "coverage_gate_passed")

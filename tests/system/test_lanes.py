"""The fixed lane and its escalation end to end: the scripted OpenAI-compatible server behind the
real `openai` client plays the composing call, the agent and the verifier, with the real
workflow, activities, ledger, `research audit` and the Temporal replayer."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from typing import Any

import pytest
from temporalio.client import Client

from activities.ledger import Ledger
from runtime.temporal_cli import find_temporal_binary
from starter.replay import replay_history
from tests.fakes.openai_server import DOCS, Message, Reply, composing, tool
from tests.fakes.openai_server import harborq_compose as compose_reply
from tests.system.test_hostile_model import brief, play, rows, steps
from workflows.details import LANE_KEY
from workflows.models import EscalateInput, RunResult, RunStatus, StopReason

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]

AUTO = {"RESEARCH_LANE": "auto"}
DEAD_LETTER = f"{DOCS}/guides/dead-letter-queues.html"


FINISH = tool(
    "finish_research",
    answer="After 5 failed deliveries a message moves to the dead-letter queue; a received "
    "message stays hidden for 30 seconds by default.",
    findings=[
        {"text": "Messages move to the DLQ after 5 delivery attempts.", "evidence_ids": ["E001"]},
        {"text": "The default visibility timeout is 30 seconds.", "evidence_ids": ["E002"]},
    ],
    limitations="Q3 (replaying dead letters) was not investigated.",
)


# The agent ends at once: a report citing nothing the gate refuses, until the steps run out.
FINISH_WITHOUT_EVIDENCE = tool("finish_research", answer="Nothing recorded.", findings=[])


def model_requests(fake: Any) -> list[dict[str, Any]]:
    return list(fake.requests)


async def test_the_demo_brief_completes_in_the_fixed_lane_with_one_composing_call(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    def script(turn: int, messages: list[Message]) -> Reply:
        assert composing(messages), "only the composing call is expected"
        return compose_reply(messages)

    result, run_id, fake = await play(dev_client, embedded_pg_url, script, brief(), env=AUTO)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.lanes == ["fixed"] and result.verified is True
    sent = model_requests(fake)
    assert len(sent) == 1 and result.counters.model_calls == 1
    assert sent[0]["tool_choice"] == {"type": "function", "function": {"name": "compose_report"}}
    assert [t["function"]["name"] for t in sent[0]["tools"]] == ["compose_report"]
    assert "<untrusted_page" in json.dumps(sent[0]["messages"])
    assert fake.verifier_requests  # the same verifier judged the composed report
    tools = [row["tool"] for row in steps(embedded_pg_url, run_id)]
    assert tools[-3:] == ["record_evidence", "record_evidence", "finish_research"]
    evidence = rows(
        embedded_pg_url, "SELECT evidence_id FROM research.evidence WHERE run_id = %s", run_id
    )
    assert sorted(row["evidence_id"] for row in evidence) == ["E001", "E002"]


async def test_a_refused_report_escalates_and_completes_without_fetching_twice(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    def script(turn: int, messages: list[Message]) -> Reply:
        if composing(messages):
            return compose_reply(messages, stray=True)
        shown = json.dumps(messages)
        if DEAD_LETTER in shown and '"url": "' + DEAD_LETTER not in shown.replace("\\", ""):
            return tool("read_page", url=DEAD_LETTER)  # read already: a stored page
        return FINISH

    result, run_id, fake = await play(dev_client, embedded_pg_url, script, brief(), env=AUTO)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.lanes == ["fixed", "agent"]
    assert result.escalation.startswith("the report was refused")
    sources = rows(embedded_pg_url, "SELECT url FROM research.sources WHERE run_id = %s", run_id)
    urls = [row["url"] for row in sources]
    assert len(urls) == len(set(urls)) == result.counters.page_fetches
    searches = rows(
        embedded_pg_url, "SELECT query FROM research.searches WHERE run_id = %s", run_id
    )
    assert len(searches) == result.counters.searches == 3  # one per sub-question, none again
    # The agent's first request carried the fixed lane's steps as its own transcript.
    agent = [body for body in model_requests(fake) if not composing(body["messages"])]
    assert agent and sum(1 for m in agent[0]["messages"] if m["role"] == "assistant") > 5
    history = await dev_client.get_workflow_handle(run_id).fetch_history()
    assert await replay_history(history) is None  # an escalated run replays clean
    # Shown: the ledger's run row, the report's header, the search attribute.
    run = rows(
        embedded_pg_url, "SELECT lanes, escalation FROM research.runs WHERE run_id = %s", run_id
    )
    assert run[0]["lanes"] == ["fixed", "agent"]
    assert run[0]["escalation"] == result.escalation
    report = rows(
        embedded_pg_url, "SELECT markdown FROM research.reports WHERE run_id = %s", run_id
    )
    assert "Lanes: fixed → agent (escalated: the report was refused" in report[0]["markdown"]
    described = await dev_client.get_workflow_handle(run_id).describe()
    assert described.typed_search_attributes.get(LANE_KEY) == ["fixed", "agent"]


async def test_an_escalate_signal_from_the_temporal_client_hands_over(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    from tests.system.test_hostile_model import hostile_worker
    from workflows.research import ResearchWorkflow

    def script(turn: int, messages: list[Message]) -> Reply:
        assert not composing(messages), "the run escalated before composing"
        return {"content": "nothing to do"}

    run_id = f"lanes-{uuid.uuid4().hex[:8]}"
    async with hostile_worker(dev_client, embedded_pg_url, script, env=AUTO) as (queue, _):
        result: RunResult = await dev_client.execute_workflow(
            ResearchWorkflow.run,
            brief(max_steps=2),
            id=run_id,
            task_queue=queue,
            start_signal="escalate",
            start_signal_args=[EscalateInput(reason="go deeper")],
        )
    assert result.lanes == ["fixed", "agent"]
    assert result.escalation == "an operator asked for deeper work: go deeper"
    assert result.stop_reason is StopReason.STEP_LIMIT


@pytest.mark.parametrize("sender", ["research", "temporal", "temporal-update"])
async def test_escalate_from_the_cli_and_the_temporal_cli(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, sender: str
) -> None:
    """Sent while the composing call is in flight: its answer is read, the lane records nothing
    and the agent takes over with what was read."""
    from tests.system.conftest import cli_env, research
    from tests.system.test_hostile_model import hostile_worker
    from workflows.research import ResearchWorkflow

    def script(turn: int, messages: list[Message]) -> Reply:
        return compose_reply(messages) if composing(messages) else FINISH_WITHOUT_EVIDENCE

    run_id = f"lanes-{sender}-{uuid.uuid4().hex[:6]}"
    address = dev_client.service_client.config.target_host
    async with hostile_worker(dev_client, embedded_pg_url, script, env=AUTO) as (queue, fake):
        fake.hold_turn = 1  # the composing call waits until the escalate is sent
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, brief(max_steps=12), id=run_id, task_queue=queue
        )
        await asyncio.to_thread(fake.held.wait, 60)
        if sender == "research":
            env = cli_env(TEMPORAL_ADDRESS=address, RESEARCH_TASK_QUEUE=queue)
            sent = await asyncio.to_thread(
                research, env, "signal", run_id, "escalate", "--reason", "check the versions"
            )
        else:
            kind = ["update", "execute"] if sender == "temporal-update" else ["signal"]
            name = "escalate_run" if sender == "temporal-update" else "escalate"
            command = [
                find_temporal_binary() or "temporal", "workflow", *kind, "--address", address,
                "--workflow-id", run_id, "--name", name,
                "--input", json.dumps({"reason": "check the versions"}),
            ]  # fmt: skip
            sent = await asyncio.to_thread(
                subprocess.run, command, capture_output=True, text=True, timeout=60
            )
        assert sent.returncode == 0, sent.stderr
        answer = "the run continues as the agent before its next step"
        if sender == "research":  # the run's answer (the `escalate_run` update)
            assert sent.stdout == f"Sent escalate to run {run_id}: {answer}\n"
        elif sender == "temporal-update":
            assert answer in sent.stdout, sent.stdout
        await asyncio.sleep(1)  # the signal is in history before the model answers
        fake.release.set()
        result: RunResult = await handle.result()
    assert result.escalation == "an operator asked for deeper work: check the versions"
    assert result.lanes == ["fixed", "agent"]
    tools = [row["tool"] for row in steps(embedded_pg_url, run_id)]
    assert "record_evidence" not in tools  # the composed report was not used
    assert result.counters.model_calls >= 2  # the composing call, then the agent


async def test_depends_on_goes_to_the_agent_after_the_first_question(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    base = brief(max_steps=6)
    questions = [
        question.model_copy(update={"depends_on": ["Q1"]}) if question.id == "Q2" else question
        for question in base.questions
    ]

    def script(turn: int, messages: list[Message]) -> Reply:
        assert not composing(messages), "a question depends on another: no composing call"
        return {"content": "nothing to add"}

    result, run_id, fake = await play(
        dev_client, embedded_pg_url, script, base.model_copy(update={"questions": questions}),
        env=AUTO,
    )  # fmt: skip
    assert result.lanes == ["fixed", "agent"]
    assert result.escalation == "Q2 depends on the answer to Q1"
    tools = [row["tool"] for row in steps(embedded_pg_url, run_id)]
    assert tools[0] == "search_web" and set(tools[1 : tools.index("")]) == {"read_page"}
    searched = rows(
        embedded_pg_url, "SELECT query FROM research.searches WHERE run_id = %s", run_id
    )
    assert [row["query"] for row in searched] == [questions[0].text]  # Q1 only, then the agent
    assert model_requests(fake)  # the agent was asked


async def test_a_budget_spent_across_lanes_ends_incomplete_with_the_composed_report(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    def script(turn: int, messages: list[Message]) -> Reply:
        assert composing(messages), "no step is left for the agent"
        return compose_reply(messages, stray=True)

    # 13 steps: three searches, six reads, three records and the refused submission.
    result, _, _ = await play(dev_client, embedded_pg_url, script, brief(max_steps=13), env=AUTO)
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.lanes == ["fixed", "agent"] and result.counters.steps == 13
    assert result.report.composed and result.evidence_count == 2
    assert result.report.submitted is not None  # the lane's report, marked not accepted


async def test_a_rerun_of_an_escalated_run_replays_both_lanes(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    from tests.system.test_hostile_model import hostile_worker
    from workflows.research import ResearchWorkflow

    def script(turn: int, messages: list[Message]) -> Reply:
        return compose_reply(messages, stray=True) if composing(messages) else FINISH

    source, source_id, _ = await play(dev_client, embedded_pg_url, script, brief(), env=AUTO)
    assert source.lanes == ["fixed", "agent"]

    def silent(turn: int, messages: list[Message]) -> Reply:
        raise AssertionError("a rerun asks no model")

    rerun_brief = brief().model_copy(update={"rerun_of": source_id})
    async with hostile_worker(dev_client, embedded_pg_url, silent) as (queue, fake):
        rerun: RunResult = await dev_client.execute_workflow(
            ResearchWorkflow.run, rerun_brief, id=f"{source_id}-rerun", task_queue=queue
        )
    assert not fake.requests and not fake.verifier_requests
    assert (rerun.status, rerun.stop_reason, rerun.lanes, rerun.escalation) == (
        source.status, source.stop_reason, source.lanes, source.escalation,
    )  # fmt: skip
    assert rerun.counters.steps == source.counters.steps
    assert [q.quote for q in rerun.quotes] == [q.quote for q in source.quotes]

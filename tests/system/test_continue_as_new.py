"""A run that continues as new is one investigation on the real pieces (a scripted
OpenAI-compatible server, an in-process worker continuing every 3 steps, the Temporal dev server,
the embedded PostgreSQL): the ledger forks each new execution from the one before, and `status`,
`replay`, `audit` and `export` follow the chain of executions; a reset of a middle execution
forks from it and continues as new again.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client

from activities.ledger import Ledger
from starter.audit import AuditData, run_checks
from starter.history import continued_from, history_chain, history_facts
from tests.fakes.openai_server import Message, Reply
from tests.fakes.telemetry_servers import OtlpReceiver
from tests.system.conftest import WorkerProcess, cli_env, demo_brief
from tests.system.conftest import research as research_cli
from tests.system.test_hostile_model import brief, hostile_worker
from tests.system.test_reset import AFTER_RESET, FIRST, WANDERING, research
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(240)]

EVERY = "3"  # RESEARCH_CONTINUE_AS_NEW_STEPS: 7 steps make executions of 3, 3 and 1 steps
PLAYS = [*FIRST, *AFTER_RESET]


def script(turn: int, messages: list[Message]) -> Reply:
    return PLAYS[turn - 1](messages) if turn <= len(PLAYS) else WANDERING


async def audit_problems(client: Client, ledger: Ledger, run_id: str) -> dict[str, list[str]]:
    rows = await ledger.run_rows(run_id)
    assert rows is not None
    facts = history_facts(await history_chain(client, run_id))
    return {r.check.name: r.problems for r in run_checks(AuditData(rows, facts)) if r.failed}


async def test_a_continued_run_is_one_investigation_for_the_ledger_and_every_command(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, tmp_path: Path
) -> None:
    run_id = f"long-{uuid.uuid4().hex[:8]}"
    env = {"RESEARCH_CONTINUE_AS_NEW_STEPS": EVERY}
    async with hostile_worker(dev_client, embedded_pg_url, script, env=env) as (queue, fake):
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, brief(max_steps=10), id=run_id, task_queue=queue
        )
        result: RunResult = await handle.result()  # follows the run to its last execution
        histories = await history_chain(dev_client, run_id)
        ids = [h.events[0].workflow_execution_started_event_attributes.original_execution_run_id
               for h in histories]  # fmt: skip

        assert (result.status, result.stop_reason) == (
            RunStatus.COMPLETED, StopReason.COVERAGE_GATE_PASSED
        )  # fmt: skip
        assert result.counters.steps == 7 and result.counters.model_calls == 7
        assert [len(history.events) > 0 for history in histories] == [True, True, True]
        # Each turn was asked once: no execution asked the model again for a turn before it.
        assert [fake.turns[turn] for turn in range(1, 8)] == [1] * 7

        # The ledger: each execution forked from the one before at its first step, the newest
        # is current and holds the whole investigation.
        executions = await corpus_ledger.executions(run_id)
        assert [(x.execution_id, x.parent_execution_id, x.current) for x in executions] == [
            (ids[0], None, False), (ids[1], ids[0], False), (ids[2], ids[1], True)
        ]  # fmt: skip
        assert [(x.fork_turn, x.fork_step) for x in executions[1:]] == [(3, 3), (6, 6)]
        rows = await corpus_ledger.run_rows(run_id)
        assert rows is not None and rows.run.execution_id == ids[2]
        assert [step.step for step in rows.steps] == list(range(1, 8))
        assert [call.turn for call in rows.model_calls] == list(range(1, 8))
        assert [e.id for e in rows.evidence] == ["E001", "E002"]
        assert rows.report is not None and not rows.report.report.composed
        assert await audit_problems(dev_client, corpus_ledger, run_id) == {}

        # The operator's commands, as an operator runs them.
        status = research(dev_client, embedded_pg_url, "status", run_id, "--json")
        assert status.returncode == 0, status.stderr
        shown = json.loads(status.stdout)
        assert (shown["status"], shown["counters"]["steps"]) == ("completed", 7)
        replayed = research(dev_client, embedded_pg_url, "replay", run_id)
        assert replayed.returncode == 0, replayed.stdout + replayed.stderr
        assert "3 executions" in replayed.stdout
        audited = research(dev_client, embedded_pg_url, "audit", run_id)
        assert audited.returncode == 0, audited.stdout + audited.stderr
        folder = tmp_path / "export"
        exported = research(dev_client, embedded_pg_url, "export", run_id, str(folder))
        assert exported.returncode == 0, exported.stderr
        assert sorted(p.name for p in folder.glob("history*.json")) == [
            "history-1.json", "history-2.json", "history.json"
        ]  # fmt: skip
        for command in ("audit", "replay"):
            offline = research(dev_client, embedded_pg_url, command, str(folder))
            assert offline.returncode == 0, offline.stdout + offline.stderr
        # A rerun on the recorded decisions (it continues as new too) is the same investigation.
        env_of_queue = cli_env(
            TEMPORAL_ADDRESS=dev_client.service_client.config.target_host,
            DATABASE_URL=embedded_pg_url,
            RESEARCH_TASK_QUEUE=queue,
        )
        rerun = await asyncio.to_thread(research_cli, env_of_queue, "rerun", run_id, "--json")
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        compared = json.loads(rerun.stdout)
        assert compared["identical"] and len(compared["rerun"]["steps"]) == 7
        rerun_chain = await history_chain(dev_client, compared["rerun"]["run_id"])
        assert len(rerun_chain) == 3

        # A reset of the middle execution, before its second turn (turn 5): it forks from that
        # execution, asks turns 5 to 7 again and continues as new after step 6, as before.
        middle = histories[1]
        decides = [
            event.event_id
            for event in middle.events
            if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and event.activity_task_scheduled_event_attributes.activity_type.name == "decide"
        ]
        completed = [
            event.event_id
            for event in middle.events
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
            and event.event_id < decides[1]
        ]
        reset = await dev_client.workflow_service.reset_workflow_execution(
            ResetWorkflowExecutionRequest(
                namespace=dev_client.namespace,
                workflow_execution=WorkflowExecution(workflow_id=run_id, run_id=ids[1]),
                reason="replay from turn 5",
                workflow_task_finish_event_id=completed[-1],
                request_id=str(uuid.uuid4()),
            )
        )
        again = dev_client.get_workflow_handle_for(
            ResearchWorkflow.run, run_id, run_id=reset.run_id
        )
        finished = await again.result()
        after = await history_chain(dev_client, run_id)

    assert (finished.status, finished.counters.steps) == (RunStatus.COMPLETED, 7)
    assert [fake.turns[turn] for turn in range(1, 8)] == [1, 1, 1, 1, 2, 2, 2]
    latest = after[-1].events[0].workflow_execution_started_event_attributes
    # The chain now runs through the reset's execution: its continuation continued from it.
    assert len(after) == 3 and continued_from(after[-1]) == reset.run_id
    assert continued_from(after[1]) == ids[0]  # a reset keeps the start it replays
    executions = await corpus_ledger.executions(run_id)
    by_id = {x.execution_id: x for x in executions}
    assert by_id[reset.run_id].parent_execution_id == ids[1]
    # The reset task ran turn 4's call again (step 4) before asking turn 5.
    assert (by_id[reset.run_id].fork_turn, by_id[reset.run_id].fork_step) == (4, 3)
    assert by_id[latest.original_execution_run_id].parent_execution_id == reset.run_id
    assert by_id[latest.original_execution_run_id].current
    assert await audit_problems(dev_client, corpus_ledger, run_id) == {}


ROOT = "invoke_agent research-agent"


@pytest.mark.timeout(240)
async def test_a_continued_run_is_one_trace(
    dev_client: Client,
    corpus_ledger: Ledger,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
) -> None:
    """A worker process exporting over OTLP runs the demo (offline policy, 13 steps) continuing
    every 5 steps: each execution's root span is a child of the one before, in one trace."""
    run_id = f"long-trace-{uuid.uuid4().hex[:8]}"
    with OtlpReceiver() as otlp:
        env = {
            **worker_env,
            "RESEARCH_CONTINUE_AS_NEW_STEPS": "5",
            "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url,
            "OTEL_BSP_SCHEDULE_DELAY": "200",
        }
        worker = spawn_worker(env)
        worker.wait_ready()
        handle = await dev_client.start_workflow(
            ResearchWorkflow.run, demo_brief(), id=run_id, task_queue=env["RESEARCH_TASK_QUEUE"]
        )
        result: RunResult = await handle.result()
        histories = await history_chain(dev_client, run_id)
        worker.stop()  # SIGTERM: the worker flushes its exporter on the way out
    spans = [s for s in otlp.collected.spans if s.attributes.get("research.run_id") == run_id]
    roots = [s for s in spans if s.name == ROOT]
    trace = [s for s in otlp.collected.spans if s.trace_id == roots[0].trace_id]

    assert result.status is RunStatus.COMPLETED and result.counters.steps == 13
    assert len(histories) == 3 and len(roots) == 3
    assert {root.trace_id for root in roots} == {roots[0].trace_id}
    by_id = {span.span_id: span for span in trace}
    first = next(root for root in roots if root.parent_id == "")
    chain = [first]
    while len(chain) < len(roots):
        chain.append(next(root for root in roots if root.parent_id == chain[-1].span_id))
    assert [root.attributes.get("research.continued_as_new") for root in chain] == [2, 3, None]
    assert chain[-1].attributes["research.status"] == "completed"
    assert chain[-1].attributes["research.steps"] == 13
    orphans = [s.name for s in trace if s.parent_id and s.parent_id not in by_id]
    assert not orphans, f"every span hangs under a root of the run: {orphans}"
    tools = [s for s in trace if s.name.startswith("execute_tool ")]
    assert sorted(s.attributes["research.step"] for s in tools) == list(range(1, 14))
    # Each execution's steps sit in its lane's span (one a root: the agent's), under its root.
    lanes = [s for s in trace if s.name == "lane agent"]
    assert sorted(lane.parent_id for lane in lanes) == sorted(root.span_id for root in chain)
    lane_of = {lane.parent_id: lane.span_id for lane in lanes}
    assert [len([t for t in tools if t.parent_id == lane_of[r.span_id]]) for r in chain] == [
        5,
        5,
        3,
    ]

"""A reset ("replay from here") keeps each execution's ledger apart, on the real pieces: a scripted
OpenAI-compatible server, an in-process worker, the Temporal dev server, the embedded PostgreSQL.

The run ends at its step limit; the operator resets it to before the model's fourth turn and the
model, asked again, answers differently this time. The new execution gets its own rows (a copy of
the first three turns, then its own), status, report, views and audit follow it, and the first
execution's rows stay as they were.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import EventType
from temporalio.api.workflowservice.v1 import ResetWorkflowExecutionRequest
from temporalio.client import Client

from activities.ledger import Ledger
from tests.fakes import hostile
from tests.fakes.openai_server import Message, Reply, tool
from tests.system.conftest import cli_env
from tests.system.conftest import research as research_cli
from tests.system.test_hostile_model import assert_audits_clean, brief, hostile_worker
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]

RESET_TURN = 4  # the model's turn the operator replays from

Play = Callable[[list[Message]], Reply]
FIRST: list[Play] = [
    lambda _: tool("search_web", query="dead-letter queue delivery attempts"),
    lambda _: tool("read_page", url=hostile.DEAD_LETTER),
    hostile.record_passage(
        "Q1", "S1", "max_deliveries", "Messages are dead-lettered after 5 deliveries."
    ),
]
# Before the reset the model wanders off until the step limit; asked again, it finishes the work.
WANDERING = tool("search_web", query="harbor queue retries forever")
AFTER_RESET: list[Play] = [
    lambda _: tool("search_web", query="default visibility timeout"),
    lambda _: tool("read_page", url=hostile.VISIBILITY),
    lambda _: tool(
        "record_evidence",
        question_id="Q2",
        source_id="S2",
        quote=hostile.VISIBILITY_30,
        claim="The default is 30 seconds.",
        stance="supports",
    ),
    lambda _: tool(
        "finish_research",
        answer="After 5 delivery attempts a message is dead-lettered; the default visibility "
        "timeout is 30 seconds.",
        findings=hostile.HONEST_FINDINGS,
        limitations="",
    ),
]


class ResetScript:
    """Turns 1 to 3 as FIRST; later turns wander, or, once `reset` is set, finish the work."""

    def __init__(self) -> None:
        self.reset = False

    def __call__(self, turn: int, messages: list[Message]) -> Reply:
        if turn < RESET_TURN:
            return FIRST[turn - 1](messages)
        if not self.reset:
            return WANDERING
        later = turn - RESET_TURN
        return AFTER_RESET[later](messages) if later < len(AFTER_RESET) else WANDERING


async def reset_before_turn(client: Client, run_id: str, execution_id: str, turn: int) -> str:
    """Reset as an operator would: to the WorkflowTaskCompleted event whose task scheduled the
    model's `turn` (the event just before that ActivityTaskScheduled). The new execution's id."""
    history = await client.get_workflow_handle(run_id, run_id=execution_id).fetch_history()
    decides = [
        event.event_id
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and event.activity_task_scheduled_event_attributes.activity_type.name == "decide"
    ]
    completed = [
        event.event_id
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
        and event.event_id < decides[turn - 1]
    ]
    response = await client.workflow_service.reset_workflow_execution(
        ResetWorkflowExecutionRequest(
            namespace=client.namespace,
            workflow_execution=WorkflowExecution(workflow_id=run_id, run_id=execution_id),
            reason=f"replay from turn {turn}",
            workflow_task_finish_event_id=completed[-1],
            request_id=str(uuid.uuid4()),
        )
    )
    return response.run_id


def research(client: Client, pg_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = cli_env(TEMPORAL_ADDRESS=client.service_client.config.target_host, DATABASE_URL=pg_url)
    return research_cli(env, *args)


def rows(pg_url: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(pg_url) as conn:
        return conn.execute(query, params).fetchall()  # type: ignore[arg-type]


async def test_a_reset_run_asks_the_model_again_and_keeps_each_execution_apart(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    run_id = f"reset-{uuid.uuid4().hex[:8]}"
    script = ResetScript()
    async with hostile_worker(dev_client, embedded_pg_url, script) as (queue, fake):
        first = await dev_client.start_workflow(
            ResearchWorkflow.run, brief(max_steps=7), id=run_id, task_queue=queue
        )
        wandered: RunResult = await first.result()
        assert (wandered.status, wandered.stop_reason) == (
            RunStatus.INCOMPLETE, StopReason.STEP_LIMIT
        )  # fmt: skip
        assert first.result_run_id is not None
        old = first.result_run_id
        script.reset = True
        new = await reset_before_turn(dev_client, run_id, old, RESET_TURN)
        again = dev_client.get_workflow_handle_for(ResearchWorkflow.run, run_id, run_id=new)
        finished = await again.result()

    assert (finished.status, finished.stop_reason) == (
        RunStatus.COMPLETED, StopReason.COVERAGE_GATE_PASSED
    )  # fmt: skip
    # The model was asked again from the reset point on, never for the turns before it.
    assert [fake.turns[turn] for turn in (1, 2, 3, 4, 5)] == [1, 1, 1, 2, 2]

    executions = await corpus_ledger.executions(run_id)
    assert [(x.execution_id, x.parent_execution_id, x.current) for x in executions] == [
        (old, None, False), (new, old, True)
    ]  # fmt: skip
    # The reset task is the one that ran turn 3's call (its quote, its step) and asked turn 4:
    # it ran again in the new execution, so the fork kept turns 1-3 and the work of steps 1-2.
    forked = executions[1]
    assert (forked.fork_turn, forked.fork_step, forked.fork_work) == (3, 2, 2)

    # Status, report and every row a reader sees are the new execution's.
    run = await corpus_ledger.run(run_id)
    assert run is not None and (run.status, run.counters.steps) == (RunStatus.COMPLETED, 7)
    current = await corpus_ledger.run_rows(run_id)
    assert current is not None and current.run.execution_id == new
    assert [step.tool for step in current.steps] == [
        "search_web", "read_page", "record_evidence",
        "search_web", "read_page", "record_evidence", "finish_research",
    ]  # fmt: skip
    assert [search.query for search in current.searches][1] == "default visibility timeout"
    assert [e.id for e in current.evidence] == ["E001", "E002"]
    assert current.report is not None and not current.report.report.composed

    # The first execution's rows are all still there, as it wrote them.
    old_steps = rows(
        embedded_pg_url,
        "SELECT step, arguments FROM research.steps WHERE run_id = %s AND execution_id = %s "
        "ORDER BY step",
        run_id,
        old,
    )
    assert len(old_steps) == 7 and "retries forever" in old_steps[3][1]
    assert rows(
        embedded_pg_url,
        "SELECT execution_id, status, composed FROM research.reports WHERE run_id = %s "
        "ORDER BY saved_at",
        run_id,
    ) == [(old, "incomplete", True), (new, "completed", False)]
    # The reviewer views follow the current execution.
    assert rows(
        embedded_pg_url,
        "SELECT evidence, cited_evidence, executions FROM research.run_summary WHERE run_id = %s",
        run_id,
    ) == [(2, 2, 2)]
    traced = "SELECT evidence_id FROM research.evidence_trace WHERE run_id = %s ORDER BY 1"
    assert rows(embedded_pg_url, traced, run_id) == [("E001",), ("E002",)]

    await assert_audits_clean(dev_client, embedded_pg_url, run_id)
    for command in (("status", run_id, "--json"), ("report", run_id, "--json")):
        shown = research(dev_client, embedded_pg_url, *command)
        assert shown.returncode == 0, shown.stderr
        assert json.loads(shown.stdout)["status"] == "completed"
    audited = research(dev_client, embedded_pg_url, "audit", run_id)
    assert audited.returncode == 0, audited.stdout + audited.stderr


async def test_resetting_an_execution_that_is_no_longer_current_copies_its_own_rows(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    """The first execution is reset (a second one finishes the work), then the first is reset
    again, one turn later: the third execution replays the first's history, so its ledger must
    hold the first's rows (its wandering step 4), not the second's."""
    run_id = f"reset-{uuid.uuid4().hex[:8]}"
    script = ResetScript()
    async with hostile_worker(dev_client, embedded_pg_url, script) as (queue, _):
        first = await dev_client.start_workflow(
            ResearchWorkflow.run, brief(max_steps=7), id=run_id, task_queue=queue
        )
        await first.result()
        assert first.result_run_id is not None
        old = first.result_run_id
        script.reset = True
        new = await reset_before_turn(dev_client, run_id, old, RESET_TURN)
        await dev_client.get_workflow_handle(run_id, run_id=new).result()
        third = await reset_before_turn(dev_client, run_id, old, RESET_TURN + 1)
        await dev_client.get_workflow_handle(run_id, run_id=third).result()

    executions = await corpus_ledger.executions(run_id)
    assert [(x.execution_id, x.parent_execution_id, x.current) for x in executions] == [
        (old, None, False), (new, old, False), (third, old, True)
    ]  # fmt: skip
    steps = "SELECT step, arguments FROM research.steps WHERE run_id = %s AND execution_id = %s"
    of_old = dict(rows(embedded_pg_url, steps, run_id, old))
    of_third = dict(rows(embedded_pg_url, steps, run_id, third))
    assert "retries forever" in of_old[4] and of_third[4] == of_old[4]
    await assert_audits_clean(dev_client, embedded_pg_url, run_id)


async def test_a_reset_to_the_first_workflow_task_starts_the_run_over_on_its_own_rows(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    run_id = f"reset-{uuid.uuid4().hex[:8]}"
    async with hostile_worker(dev_client, embedded_pg_url, ResetScript()) as (queue, fake):
        first = await dev_client.start_workflow(
            ResearchWorkflow.run, brief(max_steps=4), id=run_id, task_queue=queue
        )
        await first.result()
        assert first.result_run_id is not None
        old = first.result_run_id
        response = await dev_client.workflow_service.reset_workflow_execution(
            ResetWorkflowExecutionRequest(
                namespace=dev_client.namespace,
                workflow_execution=WorkflowExecution(workflow_id=run_id, run_id=old),
                reason="start over",
                workflow_task_finish_event_id=4,  # the first WorkflowTaskCompleted
                request_id=str(uuid.uuid4()),
            )
        )
        again = dev_client.get_workflow_handle_for(
            ResearchWorkflow.run, run_id, run_id=response.run_id
        )
        result = await again.result()

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert [fake.turns[turn] for turn in (1, 2, 3, 4)] == [2, 2, 2, 2]  # all asked again
    executions = await corpus_ledger.executions(run_id)
    assert [(x.parent_execution_id, x.fork_turn, x.current) for x in executions] == [
        (None, None, False), (old, 0, True)
    ]  # fmt: skip
    await assert_audits_clean(dev_client, embedded_pg_url, run_id)

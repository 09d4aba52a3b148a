"""Runs that end with an action in flight (cancelled while the model answers, out of time, refused
by the provider) still pass `research audit`: its allowances for a loose last turn, on real rows
and real histories (a scripted OpenAI-compatible server, an in-process worker)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest
from temporalio.client import Client, WorkflowFailureError

from activities.ledger import Ledger
from tests.fakes import hostile
from tests.fakes.openai_server import Message, Reply, Script, tool
from tests.system.test_hostile_model import assert_audits_clean, brief, hostile_worker
from workflows.models import Brief, RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(120)]

HELD_TURN = 4  # the model's answer that hangs: after a search, a read and a recorded quote


def script(then: Reply) -> Script:
    steps: list[Callable[[list[Message]], Reply]] = [
        lambda _: tool("search_web", query="dead-letter queue delivery attempts"),
        lambda _: tool("read_page", url=hostile.DEAD_LETTER),
        hostile.record_passage("Q1", "S1", "delivery attempts", "Five attempts, then the DLQ."),
    ]
    return hostile.scripted(steps, then=then)


async def held_run(
    client: Client, pg_url: str, run_brief: Brief, *, cancel: bool
) -> tuple[str, RunResult | None]:
    """Start a run whose model hangs on turn 4; cancel it there, or let its deadline pass."""
    run_id = f"loose-{uuid.uuid4().hex[:8]}"
    async with hostile_worker(client, pg_url, script(then=tool("search_web", query="more"))) as (
        queue,
        fake,
    ):
        fake.hold_turn = HELD_TURN
        handle = await client.start_workflow(
            ResearchWorkflow.run, run_brief, id=run_id, task_queue=queue
        )
        assert await asyncio.to_thread(fake.held.wait, 30), "the model was never asked turn 4"
        if cancel:
            await handle.cancel()
        try:
            result: RunResult | None = await handle.result()
        except WorkflowFailureError:
            result = None
        finally:
            fake.release.set()
    return run_id, result


async def test_a_run_cancelled_while_the_model_answers_audits_clean(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    run_id, result = await held_run(dev_client, embedded_pg_url, brief(), cancel=True)

    assert result is None  # a cancelled workflow returns no result
    run = await corpus_ledger.run(run_id)
    assert run is not None and run.status == RunStatus.CANCELLED
    assert run.counters.steps == HELD_TURN - 1  # turn 4 was in flight (its row may come later)
    await assert_audits_clean(dev_client, embedded_pg_url, run_id)


async def test_a_run_whose_deadline_passes_mid_answer_audits_clean(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    run_id, result = await held_run(
        dev_client, embedded_pg_url, brief(deadline_seconds=4), cancel=False
    )

    assert result is not None
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.DEADLINE)
    await assert_audits_clean(dev_client, embedded_pg_url, run_id)


async def test_a_run_the_provider_refuses_audits_clean(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    refused = script(then={"status": 401, "error": "invalid api key"})
    run_id = f"loose-{uuid.uuid4().hex[:8]}"
    async with hostile_worker(dev_client, embedded_pg_url, refused) as (queue, _):
        result = await dev_client.execute_workflow(
            ResearchWorkflow.run, brief(), id=run_id, task_queue=queue
        )

    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    await assert_audits_clean(dev_client, embedded_pg_url, run_id)

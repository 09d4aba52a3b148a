"""A workflow evicted mid-run (a worker's cache too small to keep it, or a worker shut down with a
run in flight, as SIGTERM does) leaves no traceback: the tracing spans let go of their context
without calling into a workflow that is gone, and the run goes on on the next worker."""

from __future__ import annotations

import contextvars
import gc
import logging
import types
import uuid
from collections.abc import Generator

import pytest
from temporalio.client import Client
from temporalio.worker import Worker

from tests.workflow.harness import (
    PAGE_A,
    PAGES,
    Checkpoint,
    FakeWeb,
    StandIns,
    call,
    make_brief,
    start,
)
from workflows import tracing
from workflows.models import RunStatus, StopReason
from workflows.research import ResearchWorkflow

SEARCH = call("search_web", query="queue timeout attempts")
READ_A = call("read_page", url=PAGE_A)
REREAD_A = call("read_page", source_id="S1", offset=18)


def _noise(records: list[logging.LogRecord]) -> list[str]:
    """Every warning, error or traceback a worker logged (the run's own step logs are info)."""
    return [
        f"{record.name}: {record.getMessage()}"
        for record in records
        if record.levelno >= logging.WARNING or record.exc_info
    ]


async def test_a_workflow_evicted_mid_run_logs_nothing_and_finishes_on_the_next_worker(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    web = FakeWeb(pages=PAGES)
    checkpoint = Checkpoint(turn=3)
    stand_ins = StandIns(web, [SEARCH, READ_A, REREAD_A], checkpoint=checkpoint)
    queue = f"research-evict-{uuid.uuid4().hex[:8]}"
    caplog.set_level(logging.INFO)

    first = Worker(
        client,
        task_queue=queue,
        workflows=[ResearchWorkflow],
        activities=stand_ins.definitions(),
        max_cached_workflows=0,  # every workflow task ends in an eviction, spans open
    )
    async with first:
        handle = await start(client, queue, make_brief(max_steps=3))
        await checkpoint.reached.wait()  # held inside the third model turn: two tool spans done
    # The worker shut down with the run in flight (SIGTERM's path): its workflow was evicted.
    gc.collect()  # coroutines the eviction left are closed now, not at some later collection

    checkpoint.released.set()
    async with Worker(
        client,
        task_queue=queue,
        workflows=[ResearchWorkflow],
        activities=stand_ins.definitions(),
    ):
        result = await handle.result()
    gc.collect()

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert _noise(caplog.records) == []


@types.coroutine
def _pending() -> Generator[None, None, None]:
    """Suspends once, as a workflow awaiting an activity does, with no event loop needed (an
    `asyncio.Future()` made here raised when an earlier test had left no current loop)."""
    yield


def test_a_span_closed_by_the_collector_in_another_context_calls_no_workflow_code(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """What an evicted run's leftover coroutine meets: `close()` (GeneratorExit) outside the
    workflow's event loop, in another context than the one the span was entered in. Before the
    fix, `workflow.is_failure_exception` raised "Not in workflow event loop" there and
    OpenTelemetry logged "Failed to detach context" with a traceback."""

    async def a_step_in_flight() -> None:
        with tracing.investigation("run-evicted", 2), tracing.tool_step("search_web", "c1", 1):
            await _pending()  # a workflow waiting on an activity

    caplog.set_level(logging.DEBUG)
    coroutine = a_step_in_flight()
    contextvars.copy_context().run(coroutine.send, None)  # runs up to the await, in its context

    coroutine.close()  # the collector, elsewhere

    assert _noise(caplog.records) == []

"""A brief that fails validation when started straight from Temporal (as `temporal workflow start
--input` does) fails the workflow at once, non-retryably, with the CLI's one sentence."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from tests.workflow.harness import FakeWeb, StandIns, call, research_worker
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow
from workflows.validation import INVALID_INPUT

BAD_BRIEFS = [
    (
        {
            "question": "x",
            "allowed_hosts": ["a.example"],
            "questions": [{"id": "Q1", "text": "a"}, {"id": "Q1", "text": "b"}],
        },
        "duplicate question id 'Q1': question ids must be unique",
    ),
    ({"question": "   ", "allowed_hosts": ["a.example"]}, "the brief's question is empty"),
    ({"question": "x", "allowed_hosts": ["https://a.example/"]}, "not a bare host name"),
    (
        {"question": "x", "allowed_hosts": ["a.example"], "limits": {"max_steps": 0}},
        "limit max_steps must be at least 1, got 0",
    ),
]


@pytest.mark.parametrize(("raw", "sentence"), BAD_BRIEFS)
async def test_invalid_brief_fails_the_workflow_with_one_sentence(
    client: Client, raw: dict[str, object], sentence: str
) -> None:
    web = FakeWeb()
    async with research_worker(client, StandIns(web, [])) as queue:
        handle = await client.start_workflow(
            "ResearchWorkflow", raw, id=f"bad-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
    cause = failure.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.non_retryable
    assert sentence in cause.message
    assert "\n" not in cause.message
    assert not web.decide_calls and not web.steps, "no activity ran for a refused brief"


@pytest.mark.parametrize(
    "args",
    [
        ["not a brief"],
        [None],
        [],  # `temporal workflow start` without --input
        [{"question": "x", "allowed_hosts": []}],
    ],
)
async def test_a_run_that_could_not_start_still_answers_its_progress_query(
    client: Client, args: list[object]
) -> None:
    """Had decoding raised, the SDK would make no workflow object and answer every later query
    with "Expected workflow input. This is a Python SDK bug." (the CLI's status, the Web UI's)."""
    async with research_worker(client, StandIns(FakeWeb(), [])) as queue:
        handle = await client.start_workflow(
            "ResearchWorkflow", args=args, id=f"bad-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
        progress = await handle.query(ResearchWorkflow.progress)

    cause = failure.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == INVALID_INPUT
    assert (progress.status, progress.message) == (RunStatus.FAILED, cause.message)
    assert cause.message in (
        "the brief must be a JSON object with question and allowed_hosts",
        "allowed_hosts is empty: name at least one host the run may read",
    )


async def test_a_brief_valid_only_once_coerced_starts_as_before(client: Client) -> None:
    """The input hint is `Brief | Any` (so bad input still makes a workflow object): a brief that
    needs pydantic's lax coercion (`"required": 1`) must still start, as it did with `Brief`.
    The run is awaited to its end (one step): a query racing a run that ends at once is not."""
    raw = {
        "question": "x",
        "allowed_hosts": ["a.example"],
        "questions": [{"id": "Q1", "text": "timeout", "required": 1}],
        "limits": {"max_steps": 1},
    }
    stand_ins = StandIns(FakeWeb(), [call("search_web", query="timeout")])
    async with research_worker(client, stand_ins) as queue:
        handle = await client.start_workflow(
            "ResearchWorkflow",
            raw,
            id=f"lax-{uuid.uuid4().hex[:8]}",
            task_queue=queue,
            result_type=RunResult,
        )
        result = await handle.result()

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert (result.counters.steps, result.counters.searches) == (1, 1)
    assert result.report.open_questions == ["Q1"]  # required: 1 read as a required question


async def test_a_brief_seed_the_fetcher_would_refuse_fails_the_run_before_the_ledger(
    client: Client,
) -> None:
    """Started past `research start` (the Temporal CLI, the Web UI): a seed with credentials
    fails the run at once, its brief never written to the ledger nor shown to a model."""
    raw = {
        "question": "x",
        "allowed_hosts": ["a.example"],
        "seed_urls": ["https://a.example/ok", "https://ops:s3cret@a.example/private"],
    }
    web = FakeWeb()
    async with research_worker(client, StandIns(web, [])) as queue:
        handle = await client.start_workflow(
            "ResearchWorkflow", raw, id=f"seed-{uuid.uuid4().hex[:8]}", task_queue=queue
        )
        with pytest.raises(WorkflowFailureError) as failure:
            await handle.result()
        progress = await handle.query(ResearchWorkflow.progress)

    cause = failure.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == INVALID_INPUT
    assert cause.message == ("seed URL https://a.example/private carries a user name or password")
    assert progress.message == cause.message
    assert not web.decide_calls and not web.steps and not web.reports

"""A brief that fails validation when started straight from Temporal (as `temporal workflow start
--input` does) fails the workflow at once, non-retryably, with the CLI's one sentence."""

from __future__ import annotations

import uuid

import pytest
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from tests.workflow.harness import FakeWeb, StandIns, research_worker

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

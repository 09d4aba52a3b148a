"""The `decide` activity through the real `openai` client against a local OpenAI-compatible
server: native function calls become a Decision, usage is the provider's, refusals are typed."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from openai import AsyncOpenAI
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.model import ModelActivities
from runtime.database import open_pool
from runtime.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, Reply, serve
from workflows.contracts import PROVIDER_ERROR, DecideInput
from workflows.models import Brief, Decision

BRIEF = Brief.model_validate({"question": "What is X?", "allowed_hosts": ["docs.example.com"]})


@asynccontextmanager
async def _model(pg_url: str, fake: FakeOpenAI) -> AsyncIterator[tuple[ModelActivities, str]]:
    """The decide activities over a real ledger and the real openai client, and a started run."""
    pool = await open_pool(pg_url)
    try:
        ledger = Ledger(pool)
        run_id = f"model-{uuid.uuid4().hex[:8]}"
        await ledger.start_run(run_id, BRIEF, "2026-01-01T00:00:00+00:00")
        with serve(fake) as base_url:
            client = AsyncOpenAI(api_key="sk-test", base_url=base_url, max_retries=0)
            settings = Settings.from_env({"OPENAI_BASE_URL": base_url})
            try:
                yield ModelActivities(settings, ledger, client), run_id
            finally:
                await client.close()
    finally:
        await pool.close()


async def _decide(pg_url: str, reply: Reply) -> tuple[Decision, FakeOpenAI]:
    fake = FakeOpenAI(lambda turn, messages: dict(reply))
    async with _model(pg_url, fake) as (model, run_id):
        request = DecideInput(run_id=run_id, turn=1, brief=BRIEF)
        decision: Decision = await ActivityEnvironment().run(model.decide, request)
    return decision, fake


async def test_a_function_call_becomes_the_decision_with_reported_usage(
    embedded_pg_url: str,
) -> None:
    decision, fake = await _decide(
        embedded_pg_url, {"tool_calls": [("search_web", {"query": "what is x"})]}
    )
    assert [(call.name, call.arguments) for call in decision.tool_calls] == [
        ("search_web", '{"query": "what is x"}')
    ]
    assert decision.usage.output_tokens == 20 and not decision.usage.estimated
    request: dict[str, Any] = fake.requests[0]
    assert request["parallel_tool_calls"] is False
    assert {tool["function"]["name"] for tool in request["tools"]} == {
        "search_web",
        "read_page",
        "record_evidence",
        "finish_research",
    }


async def test_a_reply_without_usage_is_estimated(embedded_pg_url: str) -> None:
    decision, _ = await _decide(
        embedded_pg_url, {"tool_calls": [("search_web", {"query": "x"})], "no_usage": True}
    )
    assert decision.usage.estimated and decision.usage.input_tokens > 0


async def test_prose_instead_of_a_call_is_a_decision_without_calls(embedded_pg_url: str) -> None:
    decision, _ = await _decide(embedded_pg_url, {"content": "I think the answer is 42."})
    assert decision.tool_calls == [] and decision.text == "I think the answer is 42."


async def test_a_bad_key_is_a_non_retryable_provider_error(embedded_pg_url: str) -> None:
    with pytest.raises(ApplicationError) as refused:
        await _decide(
            embedded_pg_url, {"status": 401, "error": "Incorrect API key provided: sk-te****-key"}
        )
    assert refused.value.type == PROVIDER_ERROR and refused.value.non_retryable
    assert "401" in refused.value.message and "credentials were rejected" in refused.value.message
    assert "sk-" not in refused.value.message, "the provider's text may echo the key"


async def test_rate_limits_are_retried_after_the_providers_delay(embedded_pg_url: str) -> None:
    with pytest.raises(ApplicationError) as limited:
        await _decide(embedded_pg_url, {"status": 429, "headers": {"retry-after": "7"}})
    assert not limited.value.non_retryable
    assert limited.value.next_retry_delay == timedelta(seconds=7)


async def test_server_errors_are_retried(embedded_pg_url: str) -> None:
    with pytest.raises(ApplicationError) as failed:
        await _decide(embedded_pg_url, {"status": 503, "headers": {"retry-after-ms": "1500"}})
    assert not failed.value.non_retryable
    assert failed.value.next_retry_delay == timedelta(seconds=1.5)


async def test_a_retried_turn_returns_the_recorded_answer_without_asking_again(
    embedded_pg_url: str,
) -> None:
    fake = FakeOpenAI(lambda turn, messages: {"tool_calls": [("search_web", {"query": "x"})]})
    async with _model(embedded_pg_url, fake) as (model, run_id):
        request = DecideInput(run_id=run_id, turn=1, brief=BRIEF)
        first = await ActivityEnvironment().run(model.decide, request)
        again = await ActivityEnvironment().run(model.decide, request)
    assert again == first
    assert fake.turns[1] == 1, "the model was asked once"

"""The `decide` activity through the real `openai` client, built by `composition.providers` from
settings, against a local server speaking the chat-completions wire format: native function calls
become a Decision, usage is the provider's, refusals are typed, Azure's auth reaches the wire."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import ClientAuthenticationError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.model import ModelActivities
from composition.providers import AZURE_SCOPE, open_model_client
from runtime.database import open_pool
from runtime.settings import Settings
from tests.conftest import free_port
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve
from workflows.activity import PROVIDER_ERROR, PROVIDER_RETRYABLE
from workflows.contracts import DecideInput
from workflows.models import Brief, Decision, ToolCall
from workflows.scope import RunScope
from workflows.transcript import ToolResult, TranscriptEntry

BRIEF = Brief.model_validate({"question": "What is X?", "allowed_hosts": ["docs.example.com"]})
Environ = Callable[[str], dict[str, str]]  # the server's base URL (…/v1) -> environment


def openai_env(**extra: str) -> Environ:
    return lambda base_url: {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url, **extra}


def azure_env(**extra: str) -> Environ:
    """Azure through the resource root only: the settings add /openai/v1/ themselves."""
    return lambda base_url: {
        "RESEARCH_MODEL_PROVIDER": "azure",
        "AZURE_OPENAI_ENDPOINT": base_url.removesuffix("/v1"),
        "RESEARCH_MODEL": "my-deployment",
        **extra,
    }


class FakeCredential:
    """An azure.core AsyncTokenCredential that hands out one fixed token (or refuses)."""

    def __init__(self, token: str = "entra-token", *, refuse: bool = False) -> None:
        self.token = token
        self.refuse = refuse
        self.scopes: list[tuple[str, ...]] = []

    async def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        self.scopes.append(scopes)
        if self.refuse:
            raise ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token")
        return AccessToken(self.token, int(time.time()) + 3600)

    async def close(self) -> None:
        return None

    async def __aenter__(self) -> FakeCredential:
        return self

    async def __aexit__(self, *args: object) -> None:
        return None


@asynccontextmanager
async def _model(
    pg_url: str,
    fake: FakeOpenAI,
    environ: Environ | None = None,
    credential: FakeCredential | None = None,
) -> AsyncIterator[tuple[ModelActivities, str]]:
    """The decide activities over a real ledger and the real openai client, and a started run."""
    pool = await open_pool(pg_url)
    try:
        ledger = Ledger(pool)
        run_id = f"model-{uuid.uuid4().hex[:8]}"
        await ledger.start_run(run_id, BRIEF, "2026-01-01T00:00:00+00:00")
        with serve(fake) as base_url:
            settings = Settings.from_env((environ or openai_env())(base_url))
            async with open_model_client(settings, credential=credential) as client:
                yield ModelActivities(settings.chat_options(), ledger, client), run_id
    finally:
        await pool.close()


async def _decide(
    pg_url: str,
    reply: Reply,
    environ: Environ | None = None,
    credential: FakeCredential | None = None,
) -> tuple[Decision, FakeOpenAI]:
    fake = FakeOpenAI(lambda turn, messages: dict(reply))
    async with _model(pg_url, fake, environ, credential) as (model, run_id):
        request = DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
        decision: Decision = await ActivityEnvironment().run(model.decide, request)
    return decision, fake


async def _refusal(pg_url: str, reply: Reply, environ: Environ | None = None) -> ApplicationError:
    with pytest.raises(ApplicationError) as raised:
        await _decide(pg_url, reply, environ)
    return raised.value


SEARCH = {"tool_calls": [("search_web", {"query": "what is x"})]}


async def test_a_function_call_becomes_the_decision_with_reported_usage(
    embedded_pg_url: str,
) -> None:
    decision, fake = await _decide(embedded_pg_url, SEARCH)
    assert [(call.name, call.arguments) for call in decision.tool_calls] == [
        ("search_web", '{"query": "what is x"}')
    ]
    assert decision.usage.output_tokens == 20 and not decision.usage.estimated
    request: dict[str, Any] = fake.requests[0]
    assert request["parallel_tool_calls"] is False and not decision.parallel_tool_calls
    assert "Call exactly one tool per turn." in request["messages"][0]["content"]
    assert {tool["function"]["name"] for tool in request["tools"]} == {
        "search_web",
        "read_page",
        "record_evidence",
        "finish_research",
    }
    assert fake.paths == ["/v1/chat/completions"]
    assert fake.headers[0]["authorization"] == "Bearer sk-test"


async def test_a_default_temperature_is_not_sent(embedded_pg_url: str) -> None:
    _, fake = await _decide(embedded_pg_url, SEARCH, openai_env(RESEARCH_TEMPERATURE="default"))
    assert "temperature" not in fake.requests[0]


async def test_a_local_server_without_a_key_is_called_without_one(embedded_pg_url: str) -> None:
    _, fake = await _decide(embedded_pg_url, SEARCH, lambda base_url: {"OPENAI_BASE_URL": base_url})
    assert fake.requests and "sk-" not in fake.headers[0].get("authorization", "")


async def test_settings_choose_model_temperature_output_and_parallel_calls(
    embedded_pg_url: str,
) -> None:
    two_calls = {"tool_calls": [("search_web", {"query": "a"}), ("search_web", {"query": "b"})]}
    environ = openai_env(
        RESEARCH_MODEL="local-model",
        RESEARCH_TEMPERATURE="0.3",
        RESEARCH_MAX_OUTPUT_TOKENS="256",
        RESEARCH_PARALLEL_TOOL_CALLS="1",
    )
    decision, fake = await _decide(embedded_pg_url, two_calls, environ)
    request = fake.requests[0]
    assert (request["model"], request["temperature"]) == ("local-model", 0.3)
    assert request["max_completion_tokens"] == 256 and request["parallel_tool_calls"] is True
    assert len(decision.tool_calls) == 2 and decision.parallel_tool_calls
    assert "You may call several tools in one turn" in request["messages"][0]["content"]


async def test_the_next_turn_sends_the_call_and_its_result_back_by_id(
    embedded_pg_url: str,
) -> None:
    def script(turn: int, messages: list[Message]) -> Reply:
        if turn == 1:
            return SEARCH
        return {"tool_calls": [("read_page", {"url": "https://docs.example.com/x"})]}

    fake = FakeOpenAI(script)
    async with _model(embedded_pg_url, fake) as (model, run_id):
        first = await ActivityEnvironment().run(
            model.decide, DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
        )
        entry = TranscriptEntry(
            step=1,
            call=first.tool_calls[0],
            result=ToolResult.model_validate(
                {
                    "ok": True,
                    "data": {
                        "kind": "search_results",
                        "results": [{"url": "https://docs.example.com/x"}],
                    },
                }
            ),
        )
        request = DecideInput(
            scope=RunScope.turn_of(run_id, "", 2, 1, ""), brief=BRIEF, transcript=[entry]
        )
        second = await ActivityEnvironment().run(model.decide, request)
    assert [call.name for call in second.tool_calls] == ["read_page"]
    assistant, tool = fake.requests[1]["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == first.tool_calls[0].id == "call_1_0"
    assert assistant["tool_calls"][0]["function"]["name"] == "search_web"
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1_0"
    assert "docs.example.com/x" in tool["content"]


async def test_malformed_arguments_reach_the_decision_unchanged(embedded_pg_url: str) -> None:
    decision, _ = await _decide(embedded_pg_url, {"tool_calls": [("search_web", '{"query": ')]})
    assert decision.tool_calls == [
        ToolCall(id="call_1_0", name="search_web", arguments='{"query": ')
    ]


async def test_a_reply_without_usage_is_estimated(embedded_pg_url: str) -> None:
    decision, _ = await _decide(embedded_pg_url, {**SEARCH, "no_usage": True})
    assert decision.usage.estimated and decision.usage.input_tokens > 0


async def test_reasoning_tokens_are_read_from_the_completion_details(embedded_pg_url: str) -> None:
    decision, _ = await _decide(embedded_pg_url, {**SEARCH, "reasoning_tokens": 12})
    assert decision.usage.reasoning_tokens == 12 and decision.usage.output_tokens == 20


async def test_cached_input_tokens_are_read_and_kept_in_the_ledger(embedded_pg_url: str) -> None:
    usage = {"prompt_tokens": 1_000, "completion_tokens": 20, "total_tokens": 1_020,
             "prompt_tokens_details": {"cached_tokens": 768}}  # fmt: skip
    fake = FakeOpenAI(lambda turn, messages: {**SEARCH, "usage": usage})
    async with _model(embedded_pg_url, fake) as (model, run_id):
        request = DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
        decision: Decision = await ActivityEnvironment().run(model.decide, request)
        retried: Decision = await ActivityEnvironment().run(model.decide, request)
    assert (decision.usage.input_tokens, decision.usage.cached_input_tokens) == (1_000, 768)
    assert retried.usage.cached_input_tokens == 768, "the ledger's row says it too"
    assert len(fake.requests) == 1


async def test_prose_instead_of_a_call_is_a_decision_without_calls(embedded_pg_url: str) -> None:
    decision, _ = await _decide(embedded_pg_url, {"content": "I think the answer is 42."})
    assert decision.tool_calls == [] and decision.text == "I think the answer is 42."


async def test_a_bad_key_is_a_non_retryable_provider_error(embedded_pg_url: str) -> None:
    refused = await _refusal(
        embedded_pg_url, {"status": 401, "error": "Incorrect API key provided: sk-te****-key"}
    )
    assert refused.type == PROVIDER_ERROR and refused.non_retryable
    assert "401" in refused.message and "credentials were rejected" in refused.message
    assert "OPENAI_API_KEY" in refused.message
    assert "sk-" not in refused.message, "the provider's text may echo the key"
    assert refused.__cause__ is None, "the provider's error must not travel as the cause"


@pytest.mark.parametrize(
    ("status", "expected"),
    [(400, "the request was refused: bad tools"), (404, "not found (check RESEARCH_MODEL")],
)
async def test_other_refusals_are_final_and_say_what_was_refused(
    embedded_pg_url: str, status: int, expected: str
) -> None:
    refused = await _refusal(embedded_pg_url, {"status": status, "error": "bad tools"})
    assert refused.type == PROVIDER_ERROR and refused.non_retryable
    assert f"HTTP {status}" in refused.message and expected in refused.message


@pytest.mark.parametrize(
    "reply",
    [
        {"raw": "<html><body>Sign in to continue</body></html>", "content_type": "text/html"},
        {"raw": "[1, 2, 3]", "content_type": "application/json"},
        {"raw": '{"error": "not here"}', "content_type": "application/json"},
        {"raw": "{not json", "content_type": "application/json"},
    ],
)
async def test_a_2xx_body_that_is_not_a_chat_completion_is_final(
    embedded_pg_url: str, reply: Reply
) -> None:
    wrong = await _refusal(embedded_pg_url, reply)
    assert wrong.type == PROVIDER_ERROR and wrong.non_retryable
    assert wrong.message == (
        "model provider openai answered with a body that is not a chat completion "
        "(check RESEARCH_MODEL and OPENAI_BASE_URL)"
    )


async def test_a_key_echoed_by_the_provider_is_blanked_out(embedded_pg_url: str) -> None:
    echoed = {"status": 400, "error": "bad request; headers were Authorization: Bearer sk-test"}
    refused = await _refusal(embedded_pg_url, echoed)
    assert "sk-test" not in refused.message
    assert "Authorization: Bearer [redacted]" in refused.message


async def test_rate_limits_are_retried_after_the_providers_delay(embedded_pg_url: str) -> None:
    limited = await _refusal(embedded_pg_url, {"status": 429, "headers": {"retry-after": "7"}})
    assert limited.type == PROVIDER_RETRYABLE and not limited.non_retryable
    assert limited.next_retry_delay == timedelta(seconds=7)


async def test_a_retry_after_date_is_honoured_up_to_the_cap(embedded_pg_url: str) -> None:
    date = "Fri, 01 Jan 2100 00:00:00 GMT"
    limited = await _refusal(embedded_pg_url, {"status": 429, "headers": {"retry-after": date}})
    assert limited.next_retry_delay == timedelta(seconds=120)


async def test_server_errors_are_retried(embedded_pg_url: str) -> None:
    failed = await _refusal(embedded_pg_url, {"status": 503, "headers": {"retry-after-ms": "1500"}})
    assert failed.type == PROVIDER_RETRYABLE and not failed.non_retryable
    assert failed.next_retry_delay == timedelta(seconds=1.5)


async def test_a_500_then_success_answers_on_the_retry_and_records_one_call(
    embedded_pg_url: str,
) -> None:
    fake = FakeOpenAI(lambda turn, messages: {"status": 500} if len(fake.requests) == 1 else SEARCH)
    async with _model(embedded_pg_url, fake) as (model, run_id):
        request = DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
        with pytest.raises(ApplicationError) as failed:
            await ActivityEnvironment().run(model.decide, request)
        retried = await ActivityEnvironment().run(model.decide, request)
        again = await ActivityEnvironment().run(model.decide, request)
    assert failed.value.type == PROVIDER_RETRYABLE and failed.value.next_retry_delay is None
    assert [call.name for call in retried.tool_calls] == ["search_web"] and again == retried
    assert fake.turns[1] == 2, "asked twice: once failing, once answered; then the ledger answers"


async def test_an_unreachable_endpoint_is_retried(embedded_pg_url: str) -> None:
    fake = FakeOpenAI(lambda turn, messages: SEARCH)
    closed = f"http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ApplicationError) as failed:
        async with _model(embedded_pg_url, fake, lambda _: {"OPENAI_BASE_URL": closed}) as (
            model,
            run_id,
        ):
            await ActivityEnvironment().run(
                model.decide, DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
            )
    assert (
        failed.value.type == PROVIDER_RETRYABLE and "could not be reached" in failed.value.message
    )


async def test_a_provider_that_does_not_answer_in_time_is_retried(embedded_pg_url: str) -> None:
    fake = FakeOpenAI(lambda turn, messages: SEARCH)
    fake.hold_turn = 1  # the server sits on the request until the test ends
    environ = openai_env(RESEARCH_MODEL_TIMEOUT_SECONDS="0.5")
    with pytest.raises(ApplicationError) as failed:
        async with _model(embedded_pg_url, fake, environ) as (model, run_id):
            await ActivityEnvironment().run(
                model.decide, DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
            )
    assert (
        failed.value.type == PROVIDER_RETRYABLE
        and "did not answer within 0.5 s (RESEARCH_MODEL_TIMEOUT_SECONDS)" in failed.value.message
    )


async def test_a_retried_turn_returns_the_recorded_answer_without_asking_again(
    embedded_pg_url: str,
) -> None:
    fake = FakeOpenAI(lambda turn, messages: SEARCH)
    async with _model(embedded_pg_url, fake) as (model, run_id):
        request = DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
        first = await ActivityEnvironment().run(model.decide, request)
        again = await ActivityEnvironment().run(model.decide, request)
    assert again == first
    assert fake.turns[1] == 1, "the model was asked once"


# ---------------------------------------------------------------- Azure OpenAI (/openai/v1/)


async def test_azure_with_a_key_sends_it_as_the_api_key_header_to_openai_v1(
    embedded_pg_url: str,
) -> None:
    environ = azure_env(AZURE_OPENAI_API_KEY="azure-secret-key")
    decision, fake = await _decide(embedded_pg_url, SEARCH, environ)
    assert fake.paths == ["/openai/v1/chat/completions"]
    assert fake.headers[0]["api-key"] == "azure-secret-key"
    assert "authorization" not in fake.headers[0], "the key is sent once, as api-key"
    assert fake.requests[0]["model"] == "my-deployment"
    assert [call.name for call in decision.tool_calls] == ["search_web"]


async def test_azure_without_a_key_sends_an_entra_id_bearer_token(embedded_pg_url: str) -> None:
    credential = FakeCredential("entra-token-123")
    _, fake = await _decide(embedded_pg_url, SEARCH, azure_env(), credential)
    assert fake.paths == ["/openai/v1/chat/completions"]
    assert fake.headers[0]["authorization"] == "Bearer entra-token-123"
    assert "api-key" not in fake.headers[0]
    assert credential.scopes[0] == (AZURE_SCOPE,)


async def test_an_entra_id_credential_without_a_token_is_a_clear_final_error(
    embedded_pg_url: str,
) -> None:
    with pytest.raises(ApplicationError) as refused:
        await _decide(embedded_pg_url, SEARCH, azure_env(), FakeCredential(refuse=True))
    assert refused.value.type == PROVIDER_ERROR and refused.value.non_retryable
    assert refused.value.message == (
        "model provider azure could not get a Microsoft Entra ID token (sign in with `az login`, "
        "give the worker a managed identity, or set AZURE_OPENAI_API_KEY)"
    )


async def test_a_rejected_azure_key_names_the_azure_variables(embedded_pg_url: str) -> None:
    environ = azure_env(AZURE_OPENAI_API_KEY="azure-secret-key")
    refused = await _refusal(
        embedded_pg_url, {"status": 401, "error": "Access denied: azure-secret-key"}, environ
    )
    assert refused.non_retryable and "AZURE_OPENAI_API_KEY" in refused.message
    assert "azure-secret-key" not in refused.message


async def test_a_trickling_answer_is_cut_at_the_model_timeout(embedded_pg_url: str) -> None:
    # One byte every 2 s: each read is quick (the client's own timeout never fires), the whole
    # answer would take over 20 minutes. RESEARCH_MODEL_TIMEOUT_SECONDS bounds the whole call.
    fake = FakeOpenAI(lambda turn, messages: {**SEARCH, "trickle": 2.0})
    environ = openai_env(RESEARCH_MODEL_TIMEOUT_SECONDS="3")
    started = time.monotonic()
    with pytest.raises(ApplicationError) as raised:
        async with _model(embedded_pg_url, fake, environ) as (model, run_id):
            request = DecideInput(scope=RunScope.turn_of(run_id, "", 1, 0, ""), brief=BRIEF)
            await ActivityEnvironment().run(model.decide, request)
    took = time.monotonic() - started
    refused = raised.value
    assert refused.type == PROVIDER_RETRYABLE and not refused.non_retryable
    assert refused.message == (
        "model provider openai did not answer within 3 s (RESEARCH_MODEL_TIMEOUT_SECONDS), "
        "will retry"
    )
    assert took < 15, f"cut after {took:.1f} s, not at the 3 s the setting names"
    assert len(fake.requests) == 1

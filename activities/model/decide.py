"""The `decide` activity: one model turn, from an OpenAI-compatible API or an injected policy
(`policy.Policy`: the offline policy of `baselines`), or, for a rerun, the decision its source run
recorded (`replay`).

The client (OpenAI, any OpenAI-compatible server, or Azure OpenAI's `/openai/v1/` API) is built by
`composition.providers` and injected; its failures become typed errors through `provider_errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import openai
from azure.core.exceptions import ClientAuthenticationError
from openai import AsyncOpenAI, Omit, omit
from openai.types.chat import ChatCompletion
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import spans
from activities.heartbeat import heartbeating
from activities.ledger import ledger_errors
from activities.model import prompt, replay
from activities.model.policy import Policy
from activities.model.provider_errors import (
    Provider,
    credential_failure,
    malformed_failure,
    network_failure,
    status_failure,
)
from activities.model.usage import checked_usage, estimate, printed
from activities.secrets import Scrubber, scrubbed_decision
from runtime.options import ChatOptions
from workflows import context
from workflows.cleaning import MAX_CALLS_PER_TURN, MAX_TEXT_CHARS, clean
from workflows.contracts import DECIDE, DecideInput
from workflows.models import Decision, ToolCall
from workflows.tools import bounded_call, compose_report, tool_schemas

if TYPE_CHECKING:
    from openai._legacy_response import LegacyAPIResponse

    from activities.ledger import Ledger

PROVIDERS = {
    "openai": Provider(
        label="model provider openai",
        credentials="OPENAI_API_KEY and OPENAI_BASE_URL",
        endpoint="RESEARCH_MODEL and OPENAI_BASE_URL",
    ),
    "azure": Provider(
        label="model provider azure",
        credentials="AZURE_OPENAI_API_KEY, or the Cognitive Services OpenAI User role of the "
        "Entra ID identity",
        endpoint="RESEARCH_MODEL (the deployment name) and AZURE_OPENAI_ENDPOINT",
    ),
}


@dataclass(frozen=True)
class ModelClient:
    """An OpenAI-compatible client and the headers each request adds to it."""

    openai: AsyncOpenAI
    # Azure with a key: the key travels in `api-key` (a default header of the client), and the
    # Authorization header the openai client would add is omitted per request.
    headers: Mapping[str, str | Omit] = field(default_factory=dict)


class ModelActivities:
    """`decide` over a model client, or over `policy` when the provider is a local policy (the
    composition root chooses it: product code never names a baseline)."""

    def __init__(
        self,
        chat: ChatOptions,
        ledger: Ledger,
        client: ModelClient | None,
        policy: Policy | None = None,
    ) -> None:
        if chat.local and policy is None:
            raise ValueError(f"the {chat.provider} provider needs its policy")
        if not chat.local and client is None:
            raise ValueError(f"the {chat.provider} provider needs a model client")
        self._options = chat
        self._ledger = ledger
        self._client = client
        self._policy = policy if chat.local else None
        secrets = chat.secrets
        self._scrubber = Scrubber(secrets)  # every secret of the worker, not only the model's
        self._provider = PROVIDERS.get(chat.provider, PROVIDERS["openai"]).with_secrets(
            *secrets.values()
        )

    def definitions(self) -> list[Callable[..., Any]]:
        return [self.decide]

    @activity.defn(name=DECIDE)
    async def decide(self, request: DecideInput) -> Decision:
        # Heartbeats from the start: waiting for a pooled connection under load is waiting too.
        async with heartbeating():
            return await self._decide(request)

    async def _decide(self, request: DecideInput) -> Decision:
        turn = request.scope.turn
        async with ledger_errors():
            # This execution's rows: after a reset, the turns from here on are asked again.
            ledger = await self._ledger.bind(request.scope)
            for record in request.records:  # the steps since the last decide (once: a retry
                await ledger.record_step(record)  # finds them recorded)
            # The lean loop (a watermark): the transcript is in the ledger, read with the turn.
            recorded, entries = await ledger.turn(turn, request.watermark)
        written = {"execution_id": ledger.execution or ""}  # the rows are under it from here on
        if recorded is not None:  # a retry after the answer was stored: never ask (or pay) twice
            return recorded.model_copy(update=written)
        if entries is not None:
            shown = context.filled(request, entries)
            if isinstance(shown, Decision):  # no model is asked: the run ends context_limit
                return shown
            request = shown
        decision = await self._turn(request)
        async with ledger_errors():
            provider = replay.PROVIDER if request.brief.rerun_of else self._options.provider
            await ledger.record_model_call(turn, decision, provider, request.context_chars)
        return decision.model_copy(update={"context_chars": request.context_chars, **written})

    async def _turn(self, request: DecideInput) -> Decision:
        """One model turn inside its `chat {model}` span; a rerun's turn asks no model."""
        if request.brief.rerun_of is not None:  # the run travels with its source: any worker
            return await replay.decide_replay(self._ledger, request)
        chat = self._options
        policy = self._policy
        model = chat.provider if policy is not None else chat.model
        base_url = str(self._client.openai.base_url) if self._client is not None else None
        if policy is not None:  # a deterministic policy in the worker: no prompt is sent
            if chat.pace_seconds:  # `research demo --pace`: slow enough to watch and steer
                await asyncio.sleep(chat.pace_seconds)
            with spans.chat(chat.provider, model, None, None) as span:
                decision = policy(request)
                spans.chat_result(span, decision)
            return decision
        if request.compose:  # the fixed lane's one composing call, on the fixed lane's model
            chat = replace(chat, model=chat.fixed_model or chat.model, parallel_tool_calls=False)
            messages = prompt.compose_messages(request)
        else:
            messages = prompt.messages(request, parallel_tool_calls=chat.parallel_tool_calls)
        with spans.chat(chat.provider, chat.model, base_url, messages) as span:
            decision = await self._chat(messages, request, chat)
            spans.chat_result(span, decision)
        return decision

    async def _chat(
        self, messages: list[dict[str, Any]], request: DecideInput, chat: ChatOptions
    ) -> Decision:
        assert self._client is not None
        tools = [compose_report.schema()] if request.compose else tool_schemas()
        choice = compose_report.NAME if request.compose else None
        async with _provider_errors(self._provider, chat.timeout_seconds):
            raw = await chat_request(self._client, chat, messages, tools, choice)
            # The body as sent, read once: `to_decision` reads it, so the client's ChatCompletion
            # (built from the same JSON, parsed again) was made only to be checked, every turn.
            body = raw.http_response.json()
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list):
            # an HTML login page, a JSON list, an error object answered with 200, ...
            raise malformed_failure(self._provider, "a body that is not a chat completion")
        decision = to_decision(
            body,
            request,
            parallel_tool_calls=chat.parallel_tool_calls,
            sent_chars=len(json.dumps(messages)) + len(json.dumps(tools)),
        )
        # Before the turn reaches a span, the ledger or history: no secret, in any form.
        return scrubbed_decision(decision, self._scrubber)


async def chat_request(
    client: ModelClient,
    chat: ChatOptions,
    messages: list[dict[str, Any]],
    tools: list[Any],
    function: str | None = None,
) -> LegacyAPIResponse[ChatCompletion]:
    """One chat completion request, answered raw: its body as the provider sent it too (its
    usage: the client would turn "500" into 500 and true into 1).

    The messages and tool schemas go as `extra_body`, in the places the client puts them: they
    are plain JSON already, and the client would otherwise walk every message and schema to
    transform them as TypedDicts, every turn (measured: half the client's CPU for a request, a
    tenth of the worker's CPU per step). The request is the same bytes
    (tests/integration/test_chat_request.py). `function`: the one function the reply must call
    (the fixed lane's compose_report), else the model chooses."""
    return await client.openai.chat.completions.with_raw_response.create(
        model=chat.model,
        messages=[],
        tools=[],
        tool_choice=({"type": "function", "function": {"name": function}} if function else "auto"),
        parallel_tool_calls=chat.parallel_tool_calls,
        temperature=omit if chat.temperature is None else chat.temperature,
        max_completion_tokens=chat.max_output_tokens,
        extra_headers=client.headers or None,
        extra_body={"messages": messages, "tools": tools},
    )


@contextlib.asynccontextmanager
async def _provider_errors(provider: Provider, within_seconds: float) -> AsyncIterator[None]:
    """The call, bounded as a whole (RESEARCH_MODEL_TIMEOUT_SECONDS, the body's last byte
    included: the client's own timeout bounds each read, and a server trickling a byte at a time
    would outlast it), its exceptions as typed provider errors. `from None`: the provider's own
    text, which may echo a key, must not travel into workflow history as the cause."""
    try:
        async with asyncio.timeout(within_seconds):
            yield
    except TimeoutError:
        raise network_failure(provider, timed_out=True, within=within_seconds) from None
    except openai.APIStatusError as error:
        raise provider_failure(provider, error) from None
    except (openai.APIResponseValidationError, ValueError):  # a 2xx body that is not JSON
        raise malformed_failure(provider, "a body that is not a chat completion") from None
    except openai.APIConnectionError as error:  # includes APITimeoutError
        timed_out = isinstance(error, openai.APITimeoutError)
        raise network_failure(provider, timed_out=timed_out, within=within_seconds) from None
    except ClientAuthenticationError:  # the Entra ID credential found no identity or was refused
        fix = "sign in with `az login`, give the worker a managed identity"
        raise credential_failure(provider.label, f"{fix}, or set AZURE_OPENAI_API_KEY") from None


def to_decision(
    response: Any,
    request: DecideInput,
    *,
    parallel_tool_calls: bool = False,
    sent_chars: int | None = None,
) -> Decision:
    """The first choice's tool calls and text, with provider-reported (or estimated) usage.

    Model output is data: whatever shape the body has, every call is cleaned and capped
    (`bounded_call`), at most one call more than a turn may hold is kept (so the workflow refuses
    the turn), and usage is checked. A field of the wrong shape reads as absent: the turn becomes
    a refused step, never an exception that would ask (and pay) the model again.
    `parallel_tool_calls`: the provider was allowed several calls, so the workflow runs them all.
    `sent_chars`: the size of the request (messages and tool schemas), for the usage check.
    """
    choices = _field(response, "choices")
    message = _field(choices[0], "message") if isinstance(choices, list) and choices else None
    listed = _field(message, "tool_calls")
    sent = (
        [call for call in listed if _field(call, "function") is not None]
        if isinstance(listed, list)
        else []
    )
    calls = [bounded_call(_tool_call(call)) for call in sent[: MAX_CALLS_PER_TURN + 1]]
    text = clean(_text(_field(message, "content")), MAX_TEXT_CHARS)
    return Decision(
        tool_calls=calls,
        text=text,
        usage=checked_usage(_field(response, "usage"), estimate(request, sent_chars, text, calls)),
        model=clean(_text(_field(response, "model")), 200),
        parallel_tool_calls=parallel_tool_calls,
        tool_calls_sent=len(sent) if len(sent) > len(calls) else 0,
    )


def _field(value: object, name: str) -> Any:
    """`value.name` (or `value[name]` of a raw dict), None when absent or `value` is None."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _tool_call(call: object) -> ToolCall:
    function = _field(call, "function")
    arguments = _field(function, "arguments")
    if isinstance(arguments, dict | list):  # a JSON object sent as one, not as a string
        arguments = json.dumps(arguments)
    return ToolCall(
        id=_text(_field(call, "id")),
        name=_text(_field(function, "name")),
        arguments=_text(arguments) or "{}",
    )


def _text(value: object) -> str:
    """A field the provider should have sent as a string, whatever it sent."""
    if isinstance(value, str):
        return value
    return "" if value is None else printed(value)[:100_000]


def provider_failure(provider: Provider, error: openai.APIStatusError) -> ApplicationError:
    """408/409/429/5xx retry (honouring Retry-After); any other refusal ends the run."""
    return status_failure(provider, error.status_code, error.response.headers, _short(error))


def _short(error: openai.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body) if isinstance(body, dict) else {}
    text = detail.get("message") if isinstance(detail, dict) else None
    return str(text or error.message)  # status_failure blanks the keys out, then shortens it

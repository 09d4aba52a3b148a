"""The `decide` activity: one model turn, from an OpenAI-compatible API or an injected policy
(`policy.Policy`: the offline policy of `baselines`), or, for a rerun, the decision its source run
recorded (`replay`).

The client (OpenAI, any OpenAI-compatible server, or Azure OpenAI's `/openai/v1/` API) is built by
`starter.providers` and injected; its failures become typed errors through `provider_errors`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import reprlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import openai
from azure.core.exceptions import ClientAuthenticationError
from openai import AsyncOpenAI, Omit, omit
from openai.types.chat import (
    ChatCompletion,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
)
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
from activities.secrets import Scrubber, scrubbed_decision
from runtime.settings import LOCAL_PROVIDERS, Settings
from workflows import context
from workflows.cleaning import MAX_CALLS_PER_TURN, MAX_TEXT_CHARS, clean
from workflows.contracts import DECIDE, DecideInput
from workflows.models import MAX_REPORTED_TOKENS, Decision, ToolCall, Usage
from workflows.tools import bounded_call, tool_schemas

if TYPE_CHECKING:
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
        settings: Settings,
        ledger: Ledger,
        client: ModelClient | None,
        policy: Policy | None = None,
    ) -> None:
        local = settings.model_provider in LOCAL_PROVIDERS
        if local and policy is None:
            raise ValueError(f"the {settings.model_provider} provider needs its policy")
        if not local and client is None:
            raise ValueError(f"the {settings.model_provider} provider needs a model client")
        self._settings = settings
        self._ledger = ledger
        self._client = client
        self._policy = policy if local else None
        secrets = settings.secrets()
        self._scrubber = Scrubber(secrets)  # every secret of the worker, not only the model's
        self._provider = PROVIDERS.get(settings.model_provider, PROVIDERS["openai"]).with_secrets(
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
            recorded = await ledger.decision(turn)
        if recorded is not None:  # a retry after the answer was stored: never ask (or pay) twice
            return recorded
        if request.watermark is not None:  # the lean loop: the transcript is in the ledger
            async with ledger_errors():
                entries = await ledger.transcript(request.watermark)
            shown = context.filled(request, entries)
            if isinstance(shown, Decision):  # no model is asked: the run ends context_limit
                return shown
            request = shown
        decision = await self._turn(request)
        async with ledger_errors():
            provider = replay.PROVIDER if request.brief.rerun_of else self._settings.model_provider
            await ledger.record_model_call(turn, decision, provider, request.context_chars)
        return decision.model_copy(update={"context_chars": request.context_chars})

    async def _turn(self, request: DecideInput) -> Decision:
        """One model turn inside its `chat {model}` span; a rerun's turn asks no model."""
        if request.brief.rerun_of is not None:  # the run travels with its source: any worker
            return await replay.decide_replay(self._ledger, request)
        settings = self._settings
        policy = self._policy
        model = settings.model_provider if policy is not None else settings.model
        base_url = str(self._client.openai.base_url) if self._client is not None else None
        if policy is not None:  # a deterministic policy in the worker: no prompt is sent
            with spans.chat(settings.model_provider, model, None, None) as span:
                decision = policy(request)
                spans.chat_result(span, decision)
            return decision
        messages = prompt.messages(request, parallel_tool_calls=settings.parallel_tool_calls)
        with spans.chat(settings.model_provider, model, base_url, messages) as span:
            decision = await self._chat(messages, request)
            spans.chat_result(span, decision)
        return decision

    async def _chat(self, messages: list[dict[str, Any]], request: DecideInput) -> Decision:
        assert self._client is not None
        settings = self._settings
        async with _provider_errors(self._provider, settings.model_timeout_seconds):
            response = await self._client.openai.chat.completions.create(
                model=settings.model,
                messages=cast("list[ChatCompletionMessageParam]", messages),
                tools=cast("list[ChatCompletionFunctionToolParam]", tool_schemas()),
                tool_choice="auto",
                parallel_tool_calls=settings.parallel_tool_calls,
                temperature=omit if settings.temperature is None else settings.temperature,
                max_completion_tokens=settings.max_output_tokens,
                extra_headers=self._client.headers or None,
            )
        if not isinstance(response, ChatCompletion) or not isinstance(
            getattr(response, "choices", None), list
        ):  # an HTML login page, a JSON list, an error object answered with 200, ...
            raise malformed_failure(self._provider, "a body that is not a chat completion")
        decision = to_decision(response, request, parallel_tool_calls=settings.parallel_tool_calls)
        # Before the turn reaches a span, the ledger or history: no secret, in any form.
        return scrubbed_decision(decision, self._scrubber)


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
    response: Any, request: DecideInput, *, parallel_tool_calls: bool = False
) -> Decision:
    """The first choice's tool calls and text, with provider-reported (or estimated) usage.

    Model output is data: whatever shape the body has, every call is cleaned and capped
    (`bounded_call`), at most one call more than a turn may hold is kept (so the workflow refuses
    the turn), and usage is checked. A field of the wrong shape reads as absent: the turn becomes
    a refused step, never an exception that would ask (and pay) the model again.
    `parallel_tool_calls`: the provider was allowed several calls, so the workflow runs them all.
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
        usage=_usage(response, request, text, calls),
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
    return "" if value is None else _printed(value)[:100_000]


def _printed(value: object) -> str:
    """str() of anything a JSON body can hold, even an integer of more digits than Python
    prints, or a huge list (cut short)."""
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return str(value)
        except ValueError:  # more than sys.int_info.str_digits_check_threshold digits
            return f"<a {value.bit_length()}-bit number>"
    return value if isinstance(value, str) else reprlib.repr(value)


def _usage(response: Any, request: DecideInput, text: str, calls: list[ToolCall]) -> Usage:
    """The provider's usage when it is sane: whole numbers, input above 0 (a request always has
    a prompt), at most MAX_REPORTED_TOKENS a turn. Otherwise an estimate (nothing usable was
    reported) or a clamp, with a note saying so."""
    usage = _field(response, "usage")
    if usage is None:
        return _estimate(request, text, calls)
    prompt = _field(usage, "prompt_tokens")
    completion = _field(usage, "completion_tokens")
    if not (_count(prompt) and _count(completion)) or prompt == 0:
        note = (
            f"the provider reported unusable usage (input {_shown(prompt)}, output "
            f"{_shown(completion)}): estimated instead"
        )
        return _estimate(request, text, calls).model_copy(update={"note": note})
    reasoning = _field(_field(usage, "completion_tokens_details"), "reasoning_tokens")
    cached = _field(_field(usage, "prompt_tokens_details"), "cached_tokens")
    reported = Usage(
        input_tokens=prompt,
        output_tokens=completion,
        reasoning_tokens=min(reasoning, completion) if _count(reasoning) else 0,
        cached_input_tokens=min(cached, prompt) if _count(cached) else 0,
    )
    if reported.total <= MAX_REPORTED_TOKENS:
        return reported
    input_tokens = min(prompt, MAX_REPORTED_TOKENS)
    return reported.model_copy(
        update={
            "input_tokens": input_tokens,
            "output_tokens": MAX_REPORTED_TOKENS - input_tokens,
            "reasoning_tokens": min(reported.reasoning_tokens, MAX_REPORTED_TOKENS - input_tokens),
            "cached_input_tokens": min(reported.cached_input_tokens, input_tokens),
            "note": f"the provider reported {_shown(reported.total)} tokens for one turn: "
            f"counted as {MAX_REPORTED_TOKENS}, the most one turn may report",
        }
    )


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: object) -> str:
    """A reported value fit for a note: at most 20 characters."""
    text = _printed(value) if isinstance(value, int) else reprlib.repr(value)
    return text if len(text) <= 20 else f"{text[:12]}... ({len(text)} characters)"


def _estimate(request: DecideInput, text: str, calls: list[ToolCall]) -> Usage:
    output_chars = len(text) + sum(len(call.arguments) for call in calls)
    return Usage(
        input_tokens=(request.context_chars + 2_000) // 4,
        output_tokens=output_chars // 4 + 1,
        estimated=True,
    )


def provider_failure(provider: Provider, error: openai.APIStatusError) -> ApplicationError:
    """408/409/429/5xx retry (honouring Retry-After); any other refusal ends the run."""
    return status_failure(provider, error.status_code, error.response.headers, _short(error))


def _short(error: openai.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body) if isinstance(body, dict) else {}
    text = detail.get("message") if isinstance(detail, dict) else None
    return str(text or error.message)  # status_failure blanks the keys out, then shortens it

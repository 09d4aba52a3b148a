"""The `decide` activity: one model turn, from the offline policy or an OpenAI-compatible API."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, cast

import openai
from openai.types.chat import ChatCompletionFunctionToolParam, ChatCompletionMessageParam
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import prompt
from activities.offline import decide_offline
from runtime.settings import Settings
from workflows.contracts import DECIDE, PROVIDER_ERROR, DecideInput
from workflows.models import Decision, ToolCall, Usage
from workflows.tools import tool_schemas

if TYPE_CHECKING:
    from activities.ledger import Ledger

RETRYABLE_STATUS = frozenset({408, 409, 429})
MAX_RETRY_DELAY_SECONDS = 120.0
HEARTBEAT_SECONDS = 5.0


class ModelActivities:
    def __init__(
        self, settings: Settings, ledger: Ledger, openai: openai.AsyncOpenAI | None
    ) -> None:
        if settings.model_provider == "openai" and openai is None:
            raise ValueError("the openai provider needs an AsyncOpenAI client")
        self._settings = settings
        self._ledger = ledger
        self._openai = openai

    def definitions(self) -> list[Callable[..., Any]]:
        return [self.decide]

    @activity.defn(name=DECIDE)
    async def decide(self, request: DecideInput) -> Decision:
        recorded = await self._ledger.decision(request.run_id, request.turn)
        if recorded is not None:  # a retry after the answer was stored: never ask (or pay) twice
            return recorded
        async with _heartbeating():
            if self._settings.model_provider == "offline":
                decision = decide_offline(request)
            else:
                decision = await self._chat(request)
        await self._ledger.record_model_call(
            request.run_id,
            request.turn,
            decision,
            self._settings.model_provider,
            request.context_chars,
        )
        return decision

    async def _chat(self, request: DecideInput) -> Decision:
        assert self._openai is not None
        try:
            response = await self._openai.chat.completions.create(
                model=self._settings.model,
                messages=cast("list[ChatCompletionMessageParam]", prompt.messages(request)),
                tools=cast("list[ChatCompletionFunctionToolParam]", tool_schemas()),
                tool_choice="auto",
                parallel_tool_calls=False,
                temperature=self._settings.temperature,
                max_completion_tokens=self._settings.max_output_tokens,
            )
        except openai.APIStatusError as error:
            raise provider_failure(error) from None
        return to_decision(response, request)


def to_decision(response: Any, request: DecideInput) -> Decision:
    """The first choice's tool calls and text, with provider-reported (or estimated) usage."""
    message = response.choices[0].message if response.choices else None
    calls = [
        ToolCall(
            id=call.id or "",
            name=call.function.name or "",
            arguments=call.function.arguments or "{}",
        )
        for call in (getattr(message, "tool_calls", None) or [])
        if getattr(call, "function", None) is not None
    ]
    text = (getattr(message, "content", None) or "") if message else ""
    return Decision(
        tool_calls=calls,
        text=text,
        usage=_usage(response, request, text, calls),
        model=str(getattr(response, "model", "") or ""),
    )


def _usage(response: Any, request: DecideInput, text: str, calls: list[ToolCall]) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None:
        output_chars = len(text) + sum(len(call.arguments) for call in calls)
        return Usage(
            input_tokens=(request.context_chars + 2_000) // 4,
            output_tokens=output_chars // 4 + 1,
            estimated=True,
        )
    details = getattr(usage, "completion_tokens_details", None)
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        reasoning_tokens=(getattr(details, "reasoning_tokens", None) or 0) if details else 0,
    )


def provider_failure(error: openai.APIStatusError) -> ApplicationError:
    """408/409/429/5xx retry (honouring Retry-After); any other refusal ends the run."""
    status = error.status_code
    if status in (401, 403):  # the provider's text may echo part of the key: never pass it on
        return ApplicationError(
            f"model provider answered HTTP {status}: the credentials were rejected "
            "(check OPENAI_API_KEY and OPENAI_BASE_URL)",
            type=PROVIDER_ERROR,
            non_retryable=True,
        )
    message = f"model provider answered HTTP {status}: {_short(error)}"
    if status in RETRYABLE_STATUS or status >= 500:
        return ApplicationError(
            message, type="ProviderRetryable", next_retry_delay=retry_delay(error.response.headers)
        )
    return ApplicationError(message, type=PROVIDER_ERROR, non_retryable=True)


def retry_delay(headers: Any) -> timedelta | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            seconds = float(raw) * scale
        except ValueError:
            continue
        return timedelta(seconds=min(max(seconds, 0.0), MAX_RETRY_DELAY_SECONDS))
    return None


def _short(error: openai.APIStatusError) -> str:
    body = error.body if isinstance(error.body, dict) else {}
    detail = body.get("error", body) if isinstance(body, dict) else {}
    text = detail.get("message") if isinstance(detail, dict) else None
    return str(text or error.message)[:300]


@contextlib.asynccontextmanager
async def _heartbeating() -> AsyncIterator[None]:
    """Heartbeat while the model thinks, so a dead worker's call is retried promptly."""

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(HEARTBEAT_SECONDS)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

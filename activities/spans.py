"""Spans the activities write (OpenTelemetry semantic conventions), and the refusal log and metric.

`chat {model}` around each model turn (GenAI conventions), one HTTP client span per page fetch or
search request (host, status, bytes, refusal reason), one database span per ledger transaction.
With no tracer provider installed (no exporter configured) every span here is a no-op, and
outside an investigation's trace (the CLI's own ledger reads) none is made.

Prompts, completions, page text and quotes never become attributes unless
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true, and then capped (`runtime.telemetry`).
URLs carry no query string for the search providers (it holds the model's query); keys travel in
headers and never reach a span.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode

from runtime.telemetry import capture_content, content

if TYPE_CHECKING:  # Temporal's activity API loads where an activity runs: the ledger's CLI reads
    from temporalio.common import MetricCounter  # (runs, report) import none of it

TRACER = "research.activities"
_log = logging.getLogger("research.activity")

# gen_ai.provider.name per model provider (the conventions' well-known names where one exists).
GENAI_PROVIDERS = {"openai": "openai", "azure": "azure.ai.openai"}


def _tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER)


@contextlib.contextmanager
def _span(name: str, kind: SpanKind, attributes: dict[str, Any]) -> Iterator[Span]:
    """A span that records an escaping exception as `error.type` and an ERROR status.

    Only below another span (an activity's, inside an investigation's trace): the CLI's own ledger
    reads and searches (`status`, `report`, `research search`) start no traces of their own."""
    if not trace.get_current_span().get_span_context().is_valid:
        yield trace.INVALID_SPAN
        return
    with _tracer().start_as_current_span(
        name, kind=kind, attributes=attributes, record_exception=False
    ) as span:
        try:
            yield span
        except BaseException as error:
            span.set_attribute("error.type", type(error).__name__)
            span.set_status(StatusCode.ERROR, type(error).__name__)
            raise


@contextlib.contextmanager
def chat(provider: str, model: str, base_url: str | None, messages: object) -> Iterator[Span]:
    """`chat {model}`: one model turn, by the GenAI semantic conventions."""
    attributes = chat_attributes(provider, model, base_url, messages)
    with _span(f"chat {model}", SpanKind.CLIENT, attributes) as span:
        yield span


def chat_attributes(
    provider: str, model: str, base_url: str | None, messages: object
) -> dict[str, Any]:
    """The request attributes of a chat span; the prompt only with content capture on."""
    name = GENAI_PROVIDERS.get(provider, provider)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": name,
        "gen_ai.system": name,  # the Azure exporter types GenAI dependencies by this one
        "gen_ai.request.model": model,
    }
    if base_url:
        parts = urlsplit(base_url)
        attributes["server.address"] = parts.hostname or ""
        attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    if messages is not None and capture_content():
        attributes["gen_ai.input.messages"] = content(json.dumps(messages, default=str))
    return attributes


def chat_result(span: Span, decision: Any) -> None:
    """The turn's response attributes: model, finish reason, usage, tool calls (names only)."""
    usage = decision.usage
    span.set_attributes(
        {
            "gen_ai.response.model": decision.model or "",
            "gen_ai.response.finish_reasons": ["tool_calls" if decision.tool_calls else "stop"],
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
            "research.usage.estimated": usage.estimated,
            "research.tool_calls": [call.name for call in decision.tool_calls],
        }
    )
    if usage.cached_input_tokens:
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cached_input_tokens)
    if capture_content() and decision.text:
        span.set_attribute("gen_ai.output.messages", content(decision.text))


@contextlib.contextmanager
def http_request(method: str, url: str, *, purpose: str, keep_query: bool = True) -> Iterator[Span]:
    """One HTTP client request (a page fetch with its redirects, or a search request)."""
    attributes: dict[str, Any] = {"http.request.method": method, "research.purpose": purpose}
    try:
        parts = urlsplit(url)
        attributes["url.full"] = _shown_url(url, keep_query=keep_query)
        attributes["server.address"] = parts.hostname or ""
        attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:  # not a URL at all (the guard refuses it): shown as sent, capped
        attributes["url.full"] = url[:200]
    with _span(method, SpanKind.CLIENT, attributes) as span:
        yield span


def http_response(span: Span, status: int, body_bytes: int, final_url: str | None = None) -> None:
    span.set_attribute("http.response.status_code", status)
    span.set_attribute("http.response.body.size", body_bytes)
    if final_url:
        span.set_attribute("research.final_url", _shown_url(final_url, keep_query=False))
    if status >= 400:
        span.set_status(StatusCode.ERROR, f"HTTP {status}")


def refused(span: Span, reason: str, message: str) -> None:
    """A fetch the guard refused: on the span, in the log and in the refusal counter."""
    span.set_attribute("research.refusal.reason", reason)
    span.set_status(StatusCode.ERROR, f"refused: {reason}")
    from temporalio import activity

    run_id = activity.info().workflow_id or "" if activity.in_activity() else ""
    _log.warning("fetch refused: %s", message, extra={"run_id": run_id, "reason": reason})
    if activity.in_activity():
        _refusals().add(1, {"reason": reason})


@functools.cache
def _refusals() -> MetricCounter:
    """Created once per process (see workflows.tracing._counter: a counter made per call can be
    exported under another's name)."""
    from temporalio import activity

    return activity.metric_meter().create_counter(
        "research_fetch_refusals", "fetches the guard refused, by reason"
    )


def _shown_url(url: str, *, keep_query: bool) -> str:
    """A URL for a span: never its user name or password, and no query string unless asked (a
    presigned page URL carries a token there, a search URL the model's query)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        query = parts.query if keep_query else ""
        return parts._replace(netloc=netloc, query=query, fragment="").geturl()
    except ValueError:
        return url[:200]


@contextlib.contextmanager
def database(operation: str, table: str, namespace: str, server: str) -> Iterator[Span]:
    """One ledger transaction (`INSERT research.steps`, ...)."""
    attributes: dict[str, Any] = {
        "db.system.name": "postgresql",
        "db.system": "postgresql",  # the Azure exporter types dependencies by this one
        "db.operation.name": operation,
        "db.collection.name": table,
        "db.namespace": namespace,
        "server.address": server,
    }
    with _span(f"{operation} {table}", SpanKind.CLIENT, attributes) as span:
        yield span

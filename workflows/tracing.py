"""The workflow's telemetry: the investigation's root span, a span per tool step, step logs and the
run metrics. All of it is replay-safe and creates no Temporal command, so it never changes a
decision:

- spans come from the process's tracer provider, which the worker makes Temporal's replay-safe
  kind (`runtime.telemetry`): span ids are drawn from the workflow's seeded random, a span started
  while history replays takes the workflow's time, and only a live end exports it. A span here
  ends when its block returns, fails the workflow or is cancelled, never when the worker merely
  evicts the workflow or a workflow task fails (its retry will end it);
- logs are written only when not replaying (`research.workflow` logger);
- metrics go through `workflow.metric_meter()`, which Temporal keeps replay-safe.

With no exporter configured the tracer provider is OpenTelemetry's no-op and the meter Temporal's
no-op: the cost is a few calls a step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from temporalio import workflow
from temporalio.common import MetricCounter

with workflow.unsafe.imports_passed_through():
    from opentelemetry import context as otel_context
    from opentelemetry import trace
    from opentelemetry.trace import Span as Span
    from opentelemetry.trace import SpanContext, SpanKind, StatusCode, TraceFlags

from workflows.tools.registry import REGISTRY

TRACER = "research.workflow"
NO_SPAN: Span = trace.INVALID_SPAN  # before the root span exists
AGENT = "research-agent"
_log = logging.getLogger("research.workflow")


@contextlib.contextmanager
def _span(
    name: str, kind: SpanKind, attributes: dict[str, Any], parent: Any = None
) -> Iterator[Span]:
    context = None if parent is None else _parent_context(parent.trace_id, parent.span_id)
    span = trace.get_tracer(TRACER).start_span(
        name, context=context, kind=kind, attributes=attributes
    )
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield span
    except GeneratorExit:
        # The coroutine is closed, not resumed: an evicted workflow's, collected after its worker
        # let it go (maybe on another thread, in another context). No workflow call can answer
        # there, the token belongs to a context that is gone, and the span is not ended (an
        # eviction counts as replaying: the worker that replays the run ends it).
        raise
    except BaseException as error:
        if isinstance(
            error, asyncio.CancelledError | workflow.ContinueAsNewError
        ) or workflow.is_failure_exception(error):
            span.end()  # not ended while the worker evicts (that counts as replaying)
        elif isinstance(error, Exception):  # a failed workflow task: its retry ends the span
            span.set_status(StatusCode.ERROR, f"{type(error).__name__}: {error}")
        otel_context.detach(token)
        raise
    span.end()
    otel_context.detach(token)


def _parent_context(trace_id: int, span_id: int) -> otel_context.Context | None:
    """The context of the span before (an earlier execution's root), None when it had none."""
    if not trace_id or not span_id:
        return None
    before = SpanContext(trace_id, span_id, is_remote=True, trace_flags=TraceFlags(1))
    return trace.set_span_in_context(trace.NonRecordingSpan(before))


@contextlib.contextmanager
def investigation(run_id: str, questions: int, parent: Any = None) -> Iterator[Span]:
    """The root span of a run (`invoke_agent research-agent`, GenAI agent conventions). A run
    that continued as new opens one per execution, each a child of the one before (`parent`:
    its trace and span ids), so the investigation is one trace."""
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT,
        "gen_ai.conversation.id": run_id,
        "research.run_id": run_id,
        "research.questions": questions,
    }
    with _span(f"invoke_agent {AGENT}", SpanKind.SERVER, attributes, parent) as span:
        yield span


@contextlib.contextmanager
def lane(name: str, step: int) -> Iterator[Span]:
    """`lane {name}`: the steps a run took in one lane (`workflows.lanes`), under the root."""
    attributes: dict[str, Any] = {"research.lane": name, "research.first_step": step + 1}
    with _span(f"lane {name}", SpanKind.INTERNAL, attributes) as span:
        yield span


def lane_left(span: Span, steps: int, escalation: str) -> None:
    """The lane's end: its last step, and why the run escalated ("": it did not)."""
    span.set_attribute("research.last_step", steps)
    if escalation:
        span.set_attribute("research.escalation", escalation)
        _info("escalated to the agent lane at step %d: %s", steps, escalation, step=steps)


def continued(span: Span, counters: Any, execution: int) -> None:
    """This execution's root span ends as the run continues as new, as execution `execution`."""
    span.set_attributes({"research.continued_as_new": execution, "research.steps": counters.steps})
    _info(
        "run continues as new (execution %d) after %d steps",
        execution,
        counters.steps,
        run_id=workflow.info().workflow_id,
        step=counters.steps,
    )


def outcome(span: Span, status: Any, stop_reason: Any, counters: Any, evidence: int) -> None:
    """The run's outcome on its root span, in the log and in the run counter."""
    status, stop_reason = str(status), str(stop_reason)
    span.set_attributes(
        {
            "research.status": status,
            "research.stop_reason": stop_reason,
            "research.steps": counters.steps,
            "research.model_calls": counters.model_calls,
            "research.searches": counters.searches,
            "research.page_fetches": counters.page_fetches,
            "research.tokens": counters.tokens,
            "research.evidence": evidence,
        }
    )
    if status == "failed":
        span.set_status(StatusCode.ERROR, stop_reason)
    _counter("research_runs", "runs ended, by status and stop reason").add(
        1, {"status": status, "stop_reason": stop_reason}
    )
    _info(
        "run ended %s (%s) after %d steps",
        status,
        stop_reason,
        counters.steps,
        run_id=workflow.info().workflow_id,
        status=status,
        stop_reason=stop_reason,
        step=counters.steps,
    )


@contextlib.contextmanager
def tool_step(name: str, call_id: str, step: int) -> Iterator[Span]:
    """`execute_tool {name}`: one tool step, its activities below it (its row is written by the
    activity after it: the next decide, else a `record_step` or the report's save)."""
    label = tool_label(name)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": label,
        "gen_ai.tool.call.id": call_id[:100],
        "research.step": step,
    }
    with _span(f"execute_tool {label}", SpanKind.INTERNAL, attributes) as span:
        yield span


def tool_label(name: str) -> str:
    """A tool name fit for a metric label or a span name (`Registry.label`)."""
    return REGISTRY.label(name)


def step_done(span: Span, name: str, step: int, outcome: str, error: str | None) -> None:
    """A step's outcome (ok, insufficient, refused) on its span, in the log and the metrics."""
    span.set_attribute("research.outcome", outcome)
    if outcome == "refused":
        span.set_status(StatusCode.ERROR, "refused")
        span.set_attribute("error.type", "refused")
    _counter("research_tool_calls", "tool steps, by tool and outcome").add(
        1, {"tool": tool_label(name), "outcome": outcome}
    )
    _info(
        "step %d %s %s",
        step,
        tool_label(name),
        outcome,
        run_id=workflow.info().workflow_id,
        step=step,
        tool=tool_label(name),
        outcome=outcome,
        reason=(error or "")[:300],
    )


# gen_ai.evaluation.score.value per verdict: how far the quotes carry the claim.
_SCORES = {"supported": 1.0, "partly": 0.5, "not_supported": 0.0, "contradicted": 0.0}


def evaluations(verdicts: list[Any]) -> None:
    """Each verdict of the verifier as a `gen_ai.evaluation.result` event (GenAI evaluation
    conventions) on the current span (the finish step's), and in the verdicts metric. The
    verifier's reason is model text about page text: it stays out of the trace (the ledger and
    the report keep it)."""
    span = trace.get_current_span()
    for verdict in verdicts:
        span.add_event(
            "gen_ai.evaluation.result",
            {
                "gen_ai.evaluation.name": "meaning",
                "gen_ai.evaluation.score.label": verdict.verdict,
                "gen_ai.evaluation.score.value": _SCORES.get(verdict.verdict, 0.0),
                "gen_ai.request.model": verdict.model,
                "research.claim": verdict.number,
                "research.verifier_said": verdict.said,
            },
        )
        _counter("research_verdicts", "claims the verifier read, by verdict").add(
            1, {"verdict": verdict.verdict}
        )


def tokens(input_tokens: int, output_tokens: int) -> None:
    counter = _counter("research_tokens", "provider-reported tokens, by direction")
    counter.add(max(input_tokens, 0), {"direction": "input"})  # a counter refuses negatives
    counter.add(max(output_tokens, 0), {"direction": "output"})


# Each counter is created once per worker process (this module is passed through the sandbox, so
# the dict is shared by every run): Temporal's MetricsExporter keys instruments by the id() of the
# buffered metric, and a counter created per step and dropped let a later one reuse that id and be
# exported under another counter's name (seen: research_runs missing about one time in seven).
# The workflow meter's attributes (namespace, task queue, workflow type) are the same for every run
# a worker serves; replay safety is checked at each `add`.
_COUNTERS: dict[str, MetricCounter] = {}


def _counter(name: str, description: str) -> MetricCounter:
    counter = _COUNTERS.get(name)
    if counter is None:
        counter = _COUNTERS[name] = workflow.metric_meter().create_counter(name, description)
    return counter


def _info(message: str, *args: Any, **fields: Any) -> None:
    if not workflow.unsafe.is_replaying():
        _log.info(message, *args, extra=fields)

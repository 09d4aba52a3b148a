"""Telemetry: one bootstrap for the worker and the CLI (traces, logs and metrics).

Exporters by configuration (DESIGN.md, Observability): Azure Monitor when
APPLICATIONINSIGHTS_CONNECTION_STRING is set, OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, both
when both are, nothing otherwise (then no provider is installed and every span is a no-op).

- Traces: Temporal's replay-safe tracer provider (`create_tracer_provider`'s kind, so a workflow's
  spans end once however often it replays) with Temporal's OpenTelemetryPlugin on the client. The
  workflow opens the investigation's root span itself (`workflows.tracing`), so a run is one trace
  however it was started; clients start runs and poll progress without spans of their own.
  Sampling is the SDK's (OTEL_TRACES_SAMPLER, default parent-based): every span below the root
  follows the root's decision, so an investigation is kept or dropped whole.
- Azure Monitor: the distro (`configure_azure_monitor`) sets up logs and metrics; its own tracer
  provider is switched off and its trace exporter is added to the replay-safe provider instead.
  Its automatic library instrumentations are off: the spans here are written deliberately.
- Metrics: Temporal's SDK metrics and the workflow's own counters (`workflow.metric_meter()`, which
  is replay-safe) go through a MetricBuffer into the same OpenTelemetry meter provider.
- Imports: this module loads only the standard library; the SDK, the exporters and Temporal's
  tracing plugin load in `runtime.exporters`, when an exporter is configured, so a CLI command
  that exports nothing imports none of them (tests/unit/test_cli_startup.py).
- Logs: `configure_logging` writes JSON lines when stderr is not a terminal, with trace and span
  ids, run id and step; with an exporter configured the same records are exported.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any

from runtime.names import LOGGER

if TYPE_CHECKING:
    from temporalio.plugin import SimplePlugin
    from temporalio.runtime import MetricBuffer, Runtime

# The OpenTelemetry SDK, Temporal's tracing plugin and the exporters load only when an exporter is
# configured (`runtime.exporters`): a CLI command that exports nothing imports none of them.

# The GenAI conventions' switch for prompt and completion content; off by default.
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_CAP = 1_000  # characters of content an attribute may carry when capture is on


def tracing_enabled(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("APPLICATIONINSIGHTS_CONNECTION_STRING")
    )


def capture_content(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return env.get(CAPTURE_CONTENT, "").strip().lower() == "true"


def content(text: str) -> str:
    """Content for a span attribute, capped (call only when `capture_content()`)."""
    return text if len(text) <= CONTENT_CAP else text[:CONTENT_CAP] + "…"


class Telemetry:
    """The process's telemetry: the client's plugins and runtime, and the exporters' lifetime.

    `async with` it around a worker (or any client work) to drain Temporal's metric buffer; the
    providers flush at `shutdown` (and at interpreter exit if never called).
    """

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.enabled = tracing_enabled(environ)
        self.plugins: tuple[SimplePlugin, ...] = ()
        self.runtime: Runtime | None = None
        self._buffer: MetricBuffer | None = None
        self._stack: AsyncExitStack | None = None
        if not self.enabled:
            return
        from runtime.exporters import exporting

        parts = exporting(environ)
        self.plugins, self.runtime, self._buffer = parts.plugins, parts.runtime, parts.buffer

    async def __aenter__(self) -> Telemetry:
        if self._buffer is not None and self._stack is None:
            from runtime.exporters import MetricsExporter

            self._stack = AsyncExitStack()
            await self._stack.enter_async_context(MetricsExporter(self._buffer))
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._stack is not None:
            stack, self._stack = self._stack, None
            await stack.aclose()
        self.shutdown()

    def shutdown(self) -> None:
        """Flush and stop every provider; safe to call twice."""
        if not self.enabled:
            return
        self.enabled = False
        from opentelemetry import _logs, metrics, trace

        for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
            _quietly(provider, "shutdown")
        _quietly(_logs.get_logger_provider(), "shutdown")


def _quietly(provider: object, method: str) -> None:
    call = getattr(provider, method, None)
    if callable(call):
        try:
            call()
        except Exception as error:  # an exporter that cannot flush must not fail the exit
            print(f"warning: telemetry did not flush: {error}", file=sys.stderr)


@functools.cache
def telemetry() -> Telemetry:
    """The process's telemetry, set up once from the environment."""
    return Telemetry(os.environ)


# ---------------------------------------------------------------- logs on stderr

_RECORD_FIELDS = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class _TraceIds(logging.Filter):
    """Adds the current trace and span ids (when a span is recording) to every record."""

    def __init__(self) -> None:
        super().__init__()
        # Imported here, by `configure_logging` at the worker's start: a record is also written
        # from inside the workflow sandbox, where a first import of OpenTelemetry is refused.
        from opentelemetry import trace

        self._trace = trace

    def filter(self, record: logging.LogRecord) -> bool:
        context = self._trace.get_current_span().get_span_context()
        if context.is_valid:
            record.trace_id = f"{context.trace_id:032x}"
            record.span_id = f"{context.span_id:016x}"
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and every field passed as extra."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_FIELDS and not key.startswith("_"):
                line[key] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """For a terminal: time, level, message, then run and step when the record has them (and
    the traceback when the record kept one: RESEARCH_DEBUG)."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(
            f"{key}={getattr(record, key)}"
            for key in ("run_id", "step", "tool", "outcome", "reason")
            if getattr(record, key, None) not in (None, "")
        )
        stamp = self.formatTime(record, "%H:%M:%S")
        line = f"{stamp} {record.levelname.lower():7} {record.getMessage()}" + (
            f"  [{fields}]" if fields else ""
        )
        return f"{line}\n{self.formatException(record.exc_info)}" if record.exc_info else line


class _OneLineFailures(logging.Filter):
    """The Temporal SDK logs every failed activity attempt (a provider's 500, a timeout) with
    its traceback, dozens of lines each: here it is one line, the activity, the attempt and the
    error's first line, with the run's id; the traceback only with `debug` (RESEARCH_DEBUG)."""

    def __init__(self, debug: bool) -> None:
        super().__init__()
        self._debug = debug

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        activity = getattr(record, "temporal_activity", None)
        if error is None or not isinstance(activity, dict):
            return True
        detail = (str(error).strip().splitlines() or [""])[0][:300]
        record.msg = (
            f"{activity.get('activity_type', 'activity')} attempt {activity.get('attempt', '?')} "
            f"failed: {type(error).__name__}: {detail}"
        )
        record.args = ()
        record.run_id = activity.get("workflow_id", "")
        delattr(record, "temporal_activity")  # said above; JSON would repeat it as a dict
        if not self._debug:
            record.exc_info, record.exc_text = None, None
        return True


# What the SDK's core warns when an activity completes after its run stopped waiting for it.
LATE_COMPLETION = "Activity not found on completion"


class _LateCompletions(logging.Filter):
    """A model call the run stopped waiting for (`finish_now` and the deadline leave it unread)
    may still complete after the run ended, and the SDK's core then warns `Activity not found on
    completion`: expected, nothing to do, so said only with `debug` (RESEARCH_DEBUG)."""

    def __init__(self, debug: bool) -> None:
        super().__init__()
        self._debug = debug

    def filter(self, record: logging.LogRecord) -> bool:
        return self._debug or LATE_COMPLETION not in record.getMessage()


def configure_logging(stream: Any = None, *, debug: bool = False) -> None:
    """The research loggers (`research.workflow` per step, `research.activity` per refusal) to
    stderr: JSON lines off a terminal, short text on one. Once per process. The Temporal SDK's
    warnings go the same way, a failed activity attempt on one line (`quiet_activity_failures`)."""
    logger = logging.getLogger(LOGGER)
    if any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
        return
    out = stream or sys.stderr
    handler = _stderr_handler(out)
    handler.addFilter(_TraceIds())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    quiet_activity_failures(out, debug=debug)


def quiet_activity_failures(stream: Any = None, *, debug: bool = False) -> None:
    """The SDK's `temporalio` loggers to `stream` (stderr), warnings and above, each failed
    activity attempt on one line (with `debug`, its traceback too). Once per process: a worker
    calls it through `configure_logging`, `research dev` and `demo` for their in-process worker."""
    logger = logging.getLogger("temporalio")
    if any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
        return
    handler = _stderr_handler(stream or sys.stderr)
    handler.addFilter(_OneLineFailures(debug))
    handler.addFilter(_LateCompletions(debug))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    logger.propagate = False


def _stderr_handler(out: Any) -> _StderrHandler:
    handler = _StderrHandler(out)
    tty = hasattr(out, "isatty") and out.isatty()
    handler.setFormatter(TextFormatter() if tty else JsonFormatter())
    return handler


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler configure_logging adds (so it is added once)."""

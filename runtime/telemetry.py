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
- Logs: `configure_logging` writes JSON lines when stderr is not a terminal, with trace and span
  ids, run id and step; with an exporter configured the same records are exported.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import socket
import sys
from collections.abc import Iterator, Mapping
from contextlib import AsyncExitStack
from importlib import metadata
from types import TracebackType
from typing import Any

import temporalio.activity
import temporalio.worker
from opentelemetry import trace
from opentelemetry.sdk import trace as trace_sdk
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.trace import StatusCode
from temporalio.contrib.opentelemetry import (
    MetricsExporter,
    OpenTelemetryPlugin,
    ReplaySafeTracerProvider,
)
from temporalio.contrib.opentelemetry._id_generator import TemporalIdGenerator
from temporalio.plugin import SimplePlugin
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig

SERVICE_NAME = "research-agent"
LOGGER = "research"
# The GenAI conventions' switch for prompt and completion content; off by default.
CAPTURE_CONTENT = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT_CAP = 1_000  # characters of content an attribute may carry when capture is on
_METRIC_BUFFER = 10_000
# Every automatic instrumentation the Azure Monitor distro knows, off.
_DISTRO_INSTRUMENTATIONS = (
    "azure_sdk",
    "django",
    "fastapi",
    "flask",
    "httpx",
    "httpx2",
    "psycopg2",
    "requests",
    "urllib",
    "urllib3",
)


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


class _TracerProvider(ReplaySafeTracerProvider):
    """The replay-safe provider, showing its resource as the SDK's does (the Azure exporter reads
    `get_tracer_provider().resource` on every export)."""

    @property
    def resource(self) -> Resource:
        return self._tracer_provider.resource


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
        self._tracer_provider: _TracerProvider | None = None
        self._stack: AsyncExitStack | None = None
        if not self.enabled:
            return
        resource = _resource(environ)
        self._tracer_provider = _tracer_provider(resource, environ)
        trace.set_tracer_provider(self._tracer_provider)
        _logs_and_metrics(resource, environ)
        # Temporal's plugin carries the workflow's trace context into each activity; ours opens
        # a span per activity attempt inside it.
        self.plugins = (
            OpenTelemetryPlugin(),
            SimplePlugin("research-activity-spans", interceptors=[_ActivitySpans()]),
        )
        self._buffer = MetricBuffer(_METRIC_BUFFER)
        self.runtime = Runtime(telemetry=TelemetryConfig(metrics=self._buffer))

    async def __aenter__(self) -> Telemetry:
        if self._buffer is not None and self._stack is None:
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
        from opentelemetry import _logs, metrics

        for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
            _quietly(provider, "shutdown")
        _quietly(_logs.get_logger_provider(), "shutdown")


class _ActivitySpans(temporalio.worker.Interceptor):
    def intercept_activity(
        self, next: temporalio.worker.ActivityInboundInterceptor
    ) -> temporalio.worker.ActivityInboundInterceptor:
        return _ActivitySpan(next)


class _ActivitySpan(temporalio.worker.ActivityInboundInterceptor):
    """`activity {type}`: one attempt of an activity, under the span that scheduled it."""

    async def execute_activity(self, input: temporalio.worker.ExecuteActivityInput) -> Any:
        info = temporalio.activity.info()
        attributes: dict[str, Any] = {
            "temporal.activity.type": info.activity_type,
            "temporal.activity.attempt": info.attempt,
            "temporal.activity.local": info.is_local,
            "research.run_id": info.workflow_id or "",
        }
        tracer = trace.get_tracer("research.activities")
        with tracer.start_as_current_span(
            f"activity {info.activity_type}", attributes=attributes, record_exception=False
        ) as span:
            try:
                return await super().execute_activity(input)
            except BaseException as error:
                span.set_attribute("error.type", type(error).__name__)
                span.set_status(StatusCode.ERROR, type(error).__name__)
                raise


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


def _resource(environ: Mapping[str, str]) -> Resource:
    try:
        version = metadata.version(SERVICE_NAME)
    except metadata.PackageNotFoundError:
        version = "0"
    return Resource.create(  # OTEL_RESOURCE_ATTRIBUTES may add or override
        {
            "service.name": environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME,
            "service.version": version,
            "service.instance.id": f"{socket.gethostname()}-{os.getpid()}",
            "deployment.environment.name": environ.get("RESEARCH_ENVIRONMENT") or "development",
        }
    )


def _tracer_provider(resource: Resource, environ: Mapping[str, str]) -> _TracerProvider:
    generator = TemporalIdGenerator(RandomIdGenerator())
    # sampler None: the SDK reads OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG.
    sdk = trace_sdk.TracerProvider(resource=resource, id_generator=generator)
    provider = _TracerProvider(sdk, generator)
    if environ.get("APPLICATIONINSIGHTS_CONNECTION_STRING"):
        from azure.monitor.opentelemetry.exporter import AzureMonitorTraceExporter

        provider.add_span_processor(
            BatchSpanProcessor(
                AzureMonitorTraceExporter(
                    connection_string=environ["APPLICATIONINSIGHTS_CONNECTION_STRING"]
                )
            )
        )
    if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def _logs_and_metrics(resource: Resource, environ: Mapping[str, str]) -> None:
    from opentelemetry import _logs, metrics
    from opentelemetry.instrumentation.logging.handler import LoggingHandler
    from opentelemetry.sdk._logs import LoggerProvider, LogRecordProcessor
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricReader, PeriodicExportingMetricReader

    readers: list[MetricReader] = []
    processors: list[LogRecordProcessor] = []
    if environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

        readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        processors.append(BatchLogRecordProcessor(OTLPLogExporter()))
    if environ.get("APPLICATIONINSIGHTS_CONNECTION_STRING"):
        from azure.monitor.opentelemetry import configure_azure_monitor

        # The replay-safe provider above carries the Azure trace exporter: the distro must not
        # install a tracer provider of its own. It reads its `disable_tracing` only from
        # OTEL_TRACES_EXPORTER=none (the argument is overwritten), so that is set while it runs.
        with _variable("OTEL_TRACES_EXPORTER", "none"):
            configure_azure_monitor(
                connection_string=environ["APPLICATIONINSIGHTS_CONNECTION_STRING"],
                resource=resource,
                enable_live_metrics=False,
                # Off: the distro's CPU counter divides by zero when two readings share a
                # timestamp (a traceback at a short process's exit, seen in the CLI).
                enable_performance_counters=False,
                logger_name=LOGGER,
                metric_readers=readers,
                log_record_processors=processors,
                instrumentation_options={
                    name: {"enabled": False} for name in _DISTRO_INSTRUMENTATIONS
                },
            )
        logging.getLogger(LOGGER).setLevel(logging.INFO)
        return
    metrics.set_meter_provider(MeterProvider(metric_readers=readers, resource=resource))
    logger_provider = LoggerProvider(resource=resource)
    for processor in processors:
        logger_provider.add_log_record_processor(processor)
    _logs.set_logger_provider(logger_provider)
    logger = logging.getLogger(LOGGER)
    logger.addHandler(LoggingHandler(logger_provider=logger_provider))
    logger.setLevel(logging.INFO)


@contextlib.contextmanager
def _variable(name: str, value: str) -> Iterator[None]:
    """`name=value` in this process's environment for the block, then as it was."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            del os.environ[name]
        else:
            os.environ[name] = before


# ---------------------------------------------------------------- logs on stderr

_RECORD_FIELDS = set(vars(logging.makeLogRecord({}))) | {"message", "asctime"}


class _TraceIds(logging.Filter):
    """Adds the current trace and span ids (when a span is recording) to every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = trace.get_current_span().get_span_context()
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
    """For a terminal: time, level, message, then run and step when the record has them."""

    def format(self, record: logging.LogRecord) -> str:
        fields = " ".join(
            f"{key}={getattr(record, key)}"
            for key in ("run_id", "step", "tool", "outcome", "reason")
            if getattr(record, key, None) not in (None, "")
        )
        stamp = self.formatTime(record, "%H:%M:%S")
        return f"{stamp} {record.levelname.lower():7} {record.getMessage()}" + (
            f"  [{fields}]" if fields else ""
        )


def configure_logging(stream: Any = None) -> None:
    """The research loggers (`research.workflow` per step, `research.activity` per refusal) to
    stderr: JSON lines off a terminal, short text on one. Once per process."""
    logger = logging.getLogger(LOGGER)
    if any(isinstance(handler, _StderrHandler) for handler in logger.handlers):
        return
    out = stream or sys.stderr
    handler = _StderrHandler(out)
    handler.addFilter(_TraceIds())
    tty = hasattr(out, "isatty") and out.isatty()
    handler.setFormatter(TextFormatter() if tty else JsonFormatter())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler configure_logging adds (so it is added once)."""

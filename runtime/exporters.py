"""The exporting half of `runtime.telemetry`, imported only when an exporter is configured
(OTEL_EXPORTER_OTLP_ENDPOINT or APPLICATIONINSIGHTS_CONNECTION_STRING): the OpenTelemetry SDK,
Temporal's tracing plugin and worker interceptors load here, so a CLI command that exports nothing
(`research status`, `runs`) never imports them (tests/unit/test_cli_startup.py).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import temporalio.activity
import temporalio.worker
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import StatusCode
from temporalio.contrib.opentelemetry import (
    MetricsExporter,
    OpenTelemetryPlugin,
    ReplaySafeTracerProvider,
    create_tracer_provider,
)
from temporalio.plugin import SimplePlugin
from temporalio.runtime import MetricBuffer, Runtime, TelemetryConfig

from runtime.names import LOGGER, SERVICE_NAME

__all__ = ["Exporting", "MetricsExporter", "exporting"]

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


class Exporting:
    """What an enabled `Telemetry` holds: the client's plugins, the runtime whose metrics go
    through the buffer, and the buffer."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        resource = _resource(environ)
        trace.set_tracer_provider(_tracer_provider(resource, environ))
        _logs_and_metrics(resource, environ)
        # Temporal's plugin carries the workflow's trace context into each activity; ours opens
        # a span per activity attempt inside it.
        self.plugins: tuple[SimplePlugin, ...] = (
            OpenTelemetryPlugin(),
            SimplePlugin("research-activity-spans", interceptors=[_ActivitySpans()]),
        )
        self.buffer = MetricBuffer(_METRIC_BUFFER)
        self.runtime = Runtime(telemetry=TelemetryConfig(metrics=self.buffer))


def exporting(environ: Mapping[str, str]) -> Exporting:
    return Exporting(environ)


@dataclass(frozen=True)
class _Resourced:
    """All the Azure trace exporter reads of the provider it is given (`tracer_provider=`): the
    resource it sends with every export (the `_OTELRESOURCE_` metric). The replay-safe provider
    does not show its SDK provider's resource, and the exporter would otherwise ask the global
    provider for it."""

    resource: Resource


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


def _tracer_provider(resource: Resource, environ: Mapping[str, str]) -> ReplaySafeTracerProvider:
    # No sampler given: the SDK reads OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG.
    provider = create_tracer_provider(resource=resource)
    if environ.get("APPLICATIONINSIGHTS_CONNECTION_STRING"):
        from azure.monitor.opentelemetry.exporter import AzureMonitorTraceExporter

        provider.add_span_processor(
            BatchSpanProcessor(
                AzureMonitorTraceExporter(
                    connection_string=environ["APPLICATIONINSIGHTS_CONNECTION_STRING"],
                    tracer_provider=_Resourced(resource),
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

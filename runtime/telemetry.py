"""Tracing setup: an OpenTelemetry TracerProvider only when an exporter is configured, else nothing.

Exporters by configuration (DESIGN.md, Observability): Azure Monitor when
APPLICATIONINSIGHTS_CONNECTION_STRING is set, OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set. The
exporter packages are optional: when one is configured but not installed, spans are still created
(so trace context crosses the Temporal boundary) and one warning says what to install.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Mapping

from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from temporalio.client import Interceptor
from temporalio.contrib.opentelemetry import TracingInterceptor

SERVICE_NAME = "research-agent"


def tracing_enabled(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return bool(
        env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or env.get("APPLICATIONINSIGHTS_CONNECTION_STRING")
    )


@functools.cache
def tracing_interceptors() -> tuple[Interceptor, ...]:
    """Set up tracing once per process; the Temporal interceptors to pass to Client.connect.

    A client interceptor that is also a worker interceptor (TracingInterceptor is both) is picked up
    by every Worker built on that client, so the worker needs nothing more.
    """
    if not tracing_enabled():
        return ()
    service = os.environ.get("OTEL_SERVICE_NAME") or SERVICE_NAME
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    for exporter in _exporters():
        provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # the SDK provider flushes itself at interpreter exit
    return (TracingInterceptor(),)


def _exporters() -> list[SpanExporter]:
    found: list[SpanExporter | None] = []
    if os.environ.get("APPLICATIONINSIGHTS_CONNECTION_STRING"):
        found.append(_azure_exporter())
    if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        found.append(_otlp_exporter())
    return [exporter for exporter in found if exporter is not None]


def _azure_exporter() -> SpanExporter | None:
    try:
        from azure.monitor.opentelemetry.exporter import (
            AzureMonitorTraceExporter,
        )
    except ImportError:
        _warn("APPLICATIONINSIGHTS_CONNECTION_STRING", "azure-monitor-opentelemetry-exporter")
        return None
    exporter: SpanExporter = AzureMonitorTraceExporter.from_connection_string(
        os.environ["APPLICATIONINSIGHTS_CONNECTION_STRING"]
    )
    return exporter


def _otlp_exporter() -> SpanExporter | None:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found]
            OTLPSpanExporter,
        )
    except ImportError:
        _warn("OTEL_EXPORTER_OTLP_ENDPOINT", "opentelemetry-exporter-otlp-proto-http")
        return None
    exporter: SpanExporter = OTLPSpanExporter()  # reads the OTEL_EXPORTER_OTLP_* variables itself
    return exporter


def _warn(variable: str, package: str) -> None:
    print(
        f"warning: {variable} is set but {package} is not installed, so no spans are exported",
        file=sys.stderr,
    )

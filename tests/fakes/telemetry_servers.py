"""Real local HTTP servers standing in for telemetry backends, speaking their wire formats.

- `OtlpReceiver`: the OTLP/HTTP protobuf endpoints (`/v1/traces`, `/v1/logs`, `/v1/metrics`), as a
  collector or the Aspire dashboard receives them; spans are decoded with opentelemetry-proto.
- `IngestionServer`: Application Insights' ingestion endpoint (`/v2.1/track`, gzip JSON envelopes),
  what a connection string's `IngestionEndpoint` names.
"""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    kind: int
    attributes: dict[str, Any]
    status_code: int
    resource: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (name, attributes)


@dataclass
class Collected:
    spans: list[Span] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    metric_names: set[str] = field(default_factory=set)
    envelopes: list[dict[str, Any]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)  # every body as received (decoded), to grep


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


class _Server:
    def __init__(self) -> None:
        self.collected = Collected()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with owner._lock:
                    owner.collected.raw.append(body)
                    answer = owner.receive(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", answer[0])
                self.send_header("Content-Length", str(len(answer[1])))
                self.end_headers()
                self.wfile.write(answer[1])

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    def receive(self, path: str, body: bytes) -> tuple[str, bytes]:
        raise NotImplementedError

    def __enter__(self) -> Self:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class OtlpReceiver(_Server):
    def receive(self, path: str, body: bytes) -> tuple[str, bytes]:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            for resource_spans in request.resource_spans:
                resource = _attributes(resource_spans.resource.attributes)
                for scope in resource_spans.scope_spans:
                    for span in scope.spans:
                        self.collected.spans.append(
                            Span(
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_id=span.parent_span_id.hex(),
                                name=span.name,
                                kind=span.kind,
                                attributes=_attributes(span.attributes),
                                status_code=span.status.code,
                                resource=resource,
                                events=[
                                    (event.name, _attributes(event.attributes))
                                    for event in span.events
                                ],
                            )
                        )
        elif path == "/v1/logs":
            logs = ExportLogsServiceRequest.FromString(body)
            for resource_logs in logs.resource_logs:
                for scope in resource_logs.scope_logs:
                    for record in scope.log_records:
                        self.collected.logs.append(
                            {
                                "body": _value(record.body),
                                "trace_id": record.trace_id.hex(),
                                "attributes": _attributes(record.attributes),
                            }
                        )
        elif path == "/v1/metrics":
            metrics = ExportMetricsServiceRequest.FromString(body)
            for resource_metrics in metrics.resource_metrics:
                for scope in resource_metrics.scope_metrics:
                    self.collected.metric_names.update(metric.name for metric in scope.metrics)
        return "application/x-protobuf", b""


class IngestionServer(_Server):
    """Accepts every envelope, as the service does when all are valid."""

    def receive(self, path: str, body: bytes) -> tuple[str, bytes]:
        items = json.loads(body) if path.endswith("/track") else []
        if isinstance(items, list):
            self.collected.envelopes.extend(items)
        answer = {"itemsReceived": len(items), "itemsAccepted": len(items), "errors": []}
        return "application/json", json.dumps(answer).encode()

    def connection_string(self) -> str:
        return (
            "InstrumentationKey=00000000-0000-4000-8000-000000000001;"
            f"IngestionEndpoint={self.url}/;LiveEndpoint={self.url}/"
        )

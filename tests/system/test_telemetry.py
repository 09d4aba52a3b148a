"""One investigation is one trace, in an OTLP backend and in Application Insights, however the run
was started: a worker process configured with both exporters (real OTLP/HTTP and Azure Monitor
exporters, each sending to a local server speaking the backend's wire format) runs one
investigation started from the Temporal CLI and one started with `research start --wait` (which
polls progress until the end, with the same exporters on), with every workflow task replayed from
history (RESEARCH_WORKFLOW_CACHE=0), through the real provider code paths."""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import psycopg
import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from runtime.settings import PROJECT_ROOT
from tests.conftest import installed_binary
from tests.fakes import search_servers
from tests.fakes.openai_server import FakeOpenAI, harborq_script_at, serve
from tests.fakes.page_server import PageServer
from tests.fakes.telemetry_servers import IngestionServer, OtlpReceiver, Span
from tests.system.conftest import WorkerProcess, real_provider_env
from workflows.models import RunResult, RunStatus
from workflows.research import VERIFIED_KEY

OPENAI_KEY = "sk-telemetry-secret-0123456789"
SERPER_KEY = "serper-telemetry-secret-9876543210"
DOCS = "docs.harborq.example"
ROOT = "invoke_agent research-agent"


@pytest.mark.timeout(240)
async def test_each_investigation_is_one_trace_in_otlp_and_application_insights(
    dev_server: WorkflowEnvironment,
    dev_client: Client,
    embedded_pg_url: str,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
    tmp_path: Path,
) -> None:
    brief_json = (PROJECT_ROOT / "examples" / "briefs" / "harborq-failures.json").read_text()
    from_cli, from_client = (f"otel-{name}-{uuid.uuid4().hex[:6]}" for name in ("cli", "client"))
    with (
        PageServer(root=PROJECT_ROOT / "examples" / "corpus") as pages,
        OtlpReceiver() as otlp,
        IngestionServer() as ingestion,
    ):
        base = f"http://{DOCS}:{pages.port}"
        search = search_servers.FakeSearch(
            "serper",
            [
                (f"{base}/guides/dead-letter-queues.html", "Dead-letter queues", "After 5 ..."),
                (f"{base}/concepts/visibility-timeout.html", "Visibility timeout", "30 s"),
            ],
        )
        with (
            serve(FakeOpenAI(harborq_script_at(base))) as model_url,
            search_servers.serve(search) as search_url,
        ):
            env = {
                **real_provider_env(
                    worker_env,
                    model_url=model_url,
                    search_url=search_url,
                    docs_host=DOCS,
                    keys=(OPENAI_KEY, SERPER_KEY),
                    no_corpus=tmp_path / "no-corpus",
                ),
                "RESEARCH_MODEL": "gpt-scripted",
                "RESEARCH_WORKFLOW_CACHE": "0",  # every workflow task replays its history
                "RESEARCH_ENVIRONMENT": "test",
                "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url,
                "APPLICATIONINSIGHTS_CONNECTION_STRING": ingestion.connection_string(),
                "APPLICATIONINSIGHTS_STATSBEAT_DISABLED_ALL": "true",
                "OTEL_BSP_SCHEDULE_DELAY": "200",
            }
            worker = spawn_worker(env)
            worker.wait_ready()
            queue = env["RESEARCH_TASK_QUEUE"]
            started = await asyncio.create_subprocess_exec(
                installed_binary("temporal"),
                "workflow",
                "start",
                "--address",
                dev_server.client.service_client.config.target_host,
                "--task-queue",
                queue,
                "--type",
                "ResearchWorkflow",
                "--workflow-id",
                from_cli,
                "--input",
                brief_json,
                stderr=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
            )
            _, problem = await asyncio.wait_for(started.communicate(), timeout=30)
            assert started.returncode == 0, problem.decode()
            cli_result: RunResult = await dev_client.get_workflow_handle(
                from_cli, result_type=RunResult
            ).result()
            # `research start --wait`, with the same exporters: it polls progress until the end.
            cli = await asyncio.create_subprocess_exec(
                str(Path(sys.executable).parent / "research"),
                "start",
                str(PROJECT_ROOT / "examples" / "briefs" / "harborq-failures.json"),
                "--id",
                from_client,
                "--wait",
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(cli.communicate(), timeout=120)
            started_by_cli = dev_client.get_workflow_handle(from_client, result_type=RunResult)
            client_result = await started_by_cli.result()
            summary = await (await started_by_cli.describe()).static_summary()
            metadata = await started_by_cli.query("__temporal_workflow_metadata")
            described = await started_by_cli.describe()
            verified = described.typed_search_attributes.get(VERIFIED_KEY)
            worker.stop()  # SIGTERM: the worker flushes its exporters on the way out
    assert cli.returncode == 0, out.decode() + err.decode()
    assert err.decode() == "", "the CLI exits without a warning or a traceback"
    output = "".join(worker.output)
    assert worker.process.returncode == 0, output
    assert "Traceback" not in output and "Exception ignored" not in output, output

    for result in (cli_result, client_result):
        assert result.status is RunStatus.COMPLETED, result.message
        assert result.quotes and all(q.url.startswith(base) for q in result.quotes)
        assert (result.verified, result.verifier) == (True, "openai gpt-scripted")
    # The Web UI's story: the question as the run's summary, the report as its final details.
    assert summary == "How does Harbor Queue deal with a message whose processing keeps failing?"
    details = metadata.current_details
    head, report = details.split("\n\n---\n\n", 1)
    assert head.startswith("**Research status: completed** | stop: coverage_gate_passed | steps ")
    assert f"`research report {from_client}`" in head
    assert "an independent verifier (openai gpt-scripted) judged" in report  # its header says so
    assert verified is True  # the Web UI's list: ResearchVerified
    assert report.startswith("# ")
    for quote in client_result.quotes:  # as the report shows a quote: fenced, exactly
        assert f"```text\n{quote.quote}\n```" in details
    spans = otlp.collected.spans
    roots = {span.attributes["research.run_id"]: span for span in spans if span.name == ROOT}
    assert sorted(roots) == sorted([from_cli, from_client]), [s.name for s in spans]
    assert {span.trace_id for span in spans} == {root.trace_id for root in roots.values()}, (
        "every span belongs to an investigation's trace: progress polls made none of their own"
    )
    for run_id, result in ((from_cli, cli_result), (from_client, client_result)):
        _check_trace(roots[run_id], [s for s in spans if s.trace_id == roots[run_id].trace_id])
        assert roots[run_id].attributes["research.steps"] == result.counters.steps
        assert roots[run_id].attributes["research.tokens"] == result.counters.tokens

    _check_application_insights(ingestion.collected.envelopes, roots)
    _check_logs_and_metrics(otlp, roots)
    _check_nothing_private(otlp, ingestion, embedded_pg_url, [from_cli, from_client])


def _check_trace(root: Span, trace: list[Span]) -> None:
    ids = Counter(span.span_id for span in trace)
    assert max(ids.values()) == 1, "no span exported twice, though every task replayed"
    known = set(ids)
    assert root.parent_id == "" and root.kind == 2, "the root is the workflow's server span"
    orphans = [span.name for span in trace if span is not root and span.parent_id not in known]
    assert not orphans, f"every span hangs under the root: {orphans}"
    assert root.attributes["research.status"] == "completed"
    assert root.attributes["research.stop_reason"] == "coverage_gate_passed"
    assert root.resource["service.name"] == "research-agent"
    assert root.resource["deployment.environment.name"] == "test"
    assert {"service.version", "service.instance.id"} <= set(root.resource)

    names = Counter(span.name for span in trace)
    for name in (
        "activity start_run",
        "activity decide",
        "activity search_web",
        "activity read_page",
        "activity record_evidence",
        "activity save_report",
        "chat gpt-scripted",
        "execute_tool search_web",
        "execute_tool read_page",
        "execute_tool record_evidence",
        "execute_tool finish_research",
        "GET",
        "POST",
        "INSERT research.steps",
        "INSERT research.evidence",
    ):
        assert names[name] >= 1, f"{name} missing from {sorted(names)}"
    steps = root.attributes["research.steps"]
    assert sum(n for name, n in names.items() if name.startswith("execute_tool ")) == steps
    by_id = {span.span_id: span for span in trace}
    chats = [span for span in trace if span.name == "chat gpt-scripted"]
    turns = [chat for chat in chats if by_id[chat.parent_id].name == "activity decide"]
    verified = [chat for chat in chats if by_id[chat.parent_id].name == "activity verify"]
    assert len(turns) == root.attributes["research.model_calls"]
    # the answer, two findings, the limitations and the two required questions
    assert len(verified) == 6 and len(chats) == len(turns) + 6
    # The verifier's verdicts: evaluation events on the finish step that passed.
    finish = [span for span in trace if span.name == "execute_tool finish_research"][-1]
    events = [
        attributes for name, attributes in finish.events if name == "gen_ai.evaluation.result"
    ]
    assert [event["research.claim"] for event in events] == [0, 1, 2, 3, 4, 5]
    assert {event["gen_ai.evaluation.score.label"] for event in events} == {"supported"}
    assert all(event["gen_ai.evaluation.name"] == "meaning" for event in events)
    for chat in turns:
        attributes = chat.attributes
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == "openai"
        assert attributes["gen_ai.request.model"] == "gpt-scripted"
        assert attributes["gen_ai.usage.input_tokens"] > 0
        assert attributes["gen_ai.usage.output_tokens"] > 0
        assert attributes["gen_ai.response.finish_reasons"] in (["tool_calls"], ["stop"])
        assert attributes["server.address"] == "127.0.0.1"
        assert by_id[chat.parent_id].name == "activity decide"
    # A span per lane under the root (these workers run the agent lane: RESEARCH_LANE=agent),
    # each step in its lane.
    lanes = {span.span_id: span for span in trace if span.name.startswith("lane ")}
    assert [span.name for span in lanes.values()] == ["lane agent"]
    assert all(span.parent_id == root.span_id for span in lanes.values())
    for tool in (span for span in trace if span.name.startswith("execute_tool ")):
        assert tool.attributes["gen_ai.tool.name"] == tool.name.removeprefix("execute_tool ")
        assert tool.attributes["gen_ai.tool.call.id"]
        assert tool.parent_id in lanes
    fetches = [span for span in trace if span.attributes.get("research.purpose") == "page"]
    assert {span.attributes["server.address"] for span in fetches} == {DOCS}
    assert all(span.attributes["http.response.status_code"] == 200 for span in fetches)
    assert all(span.attributes["http.response.body.size"] > 0 for span in fetches)
    for span in fetches:  # a page read sits under its tool step, below the root
        assert by_id[by_id[span.parent_id].parent_id].name == "execute_tool read_page"
    searches = [span for span in trace if span.attributes.get("research.purpose") == "search"]
    assert searches and all("?" not in span.attributes["url.full"] for span in searches)
    database = [span for span in trace if span.attributes.get("db.system.name") == "postgresql"]
    assert all(span.attributes["db.namespace"] for span in database)


def _check_application_insights(envelopes: list[dict[str, Any]], roots: dict[str, Span]) -> None:
    operations = {root.trace_id for root in roots.values()}
    requests = [e for e in envelopes if e["data"]["baseType"] == "RequestData"]
    assert sorted(e["data"]["baseData"]["name"] for e in requests) == [ROOT, ROOT]
    assert {e["tags"]["ai.operation.id"] for e in requests} == operations
    dependencies = [e for e in envelopes if e["data"]["baseType"] == "RemoteDependencyData"]
    assert {e["tags"]["ai.operation.id"] for e in dependencies} == operations
    assert {e["tags"]["ai.cloud.role"] for e in requests + dependencies} == {"research-agent"}
    typed: dict[str, set[str]] = {}
    for envelope in dependencies:
        data = envelope["data"]["baseData"]
        typed.setdefault(data["type"], set()).add(data.get("target", ""))
    assert {"HTTP", "postgresql", "GenAI | openai"} <= set(typed), typed
    assert any(DOCS in target for target in typed["HTTP"]), typed["HTTP"]
    assert all(target for target in typed["postgresql"]), typed["postgresql"]
    http = [e["data"]["baseData"] for e in dependencies if e["data"]["baseData"]["type"] == "HTTP"]
    assert {data["resultCode"] for data in http} == {"200"}
    logs = [e for e in envelopes if e["data"]["baseType"] == "MessageData"]
    steps = [e for e in logs if e["data"]["baseData"]["message"].startswith("step ")]
    assert steps and {e["tags"]["ai.operation.id"] for e in steps} == operations
    # Each export carries the worker's resource (the exporter reads it off its tracer provider).
    resources = [
        e["data"]["baseData"]["properties"]
        for e in envelopes
        if e["data"]["baseType"] == "MetricData"
        and e["data"]["baseData"]["metrics"][0]["name"] == "_OTELRESOURCE_"
    ]
    assert resources and {r.get("service.name") for r in resources} == {"research-agent"}


def _check_logs_and_metrics(otlp: OtlpReceiver, roots: dict[str, Span]) -> None:
    logs = otlp.collected.logs
    for run_id, root in roots.items():
        steps = [
            log
            for log in logs
            if log["attributes"].get("run_id") == run_id and "step" in log["attributes"]
        ]
        assert steps, f"no step logs for {run_id}"
        assert {log["trace_id"] for log in steps} == {root.trace_id}
    metrics = otlp.collected.metric_names
    for name in ("research_runs", "research_tool_calls", "research_tokens"):
        assert name in metrics, sorted(metrics)
    assert any(name.startswith("temporal_") for name in metrics), sorted(metrics)


def _check_nothing_private(
    otlp: OtlpReceiver, ingestion: IngestionServer, database_url: str, run_ids: list[str]
) -> None:
    with psycopg.connect(database_url) as connection:
        quotes = [
            quote
            for (quote,) in connection.execute(
                "SELECT quote FROM research.evidence WHERE run_id = ANY(%s)", (run_ids,)
            ).fetchall()
        ]
    assert quotes
    sent = b"\n".join(otlp.collected.raw + ingestion.collected.raw).decode("utf-8", "replace")
    for secret in (OPENAI_KEY, SERPER_KEY):
        assert secret not in sent
    for quote in quotes:
        assert quote[:60] not in sent, "no page text or quote leaves through telemetry"

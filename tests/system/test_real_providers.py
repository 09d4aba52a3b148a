"""A whole investigation through the real providers' code paths, every provider a local server:
the real `openai` client against an OpenAI-compatible server, Serper-shaped web search, and pages
served over HTTP (gzip-compressed) by a host configured in RESEARCH_LOCAL_HOSTS. The worker is a
separate process configured only through its environment, as an operator would run it."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import psycopg
import pytest
from temporalio.client import Client

from runtime.settings import PROJECT_ROOT
from tests.fakes import search_servers
from tests.fakes.openai_server import FakeOpenAI, harborq_script_at, reported_tokens, serve
from tests.fakes.page_server import PageServer
from tests.system.conftest import WorkerProcess, demo_brief, real_provider_env
from workflows.models import RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

OPENAI_KEY = "sk-e2e-secret-0123456789"
SERPER_KEY = "serper-e2e-secret-9876543210"
DOCS = "docs.harborq.example"


@pytest.mark.timeout(180)
async def test_an_investigation_with_real_provider_code_completes_through_the_gate(
    dev_client: Client,
    embedded_pg_url: str,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
    tmp_path: Path,
) -> None:
    brief = demo_brief()
    run_id = f"e2e-{uuid.uuid4().hex[:8]}"
    with PageServer(root=PROJECT_ROOT / "examples" / "corpus") as pages:
        base = f"http://{DOCS}:{pages.port}"
        search = search_servers.FakeSearch(
            "serper",
            [
                (f"{base}/guides/dead-letter-queues.html", "Dead-letter queues", "After 5 ..."),
                ("https://elsewhere.example/harborq", "Off the allowlist", "never read"),
                (f"{base}/concepts/visibility-timeout.html", "Visibility timeout", "30 s"),
            ],
        )
        fake = FakeOpenAI(harborq_script_at(base))
        with serve(fake) as model_url, search_servers.serve(search) as search_url:
            env = real_provider_env(
                worker_env,
                model_url=model_url,
                search_url=search_url,
                docs_host=DOCS,
                keys=(OPENAI_KEY, SERPER_KEY),
                no_corpus=tmp_path / "no-corpus",
            )
            worker = spawn_worker(env)
            worker.wait_ready()
            result: RunResult = await dev_client.execute_workflow(
                ResearchWorkflow.run, brief, id=run_id, task_queue=env["RESEARCH_TASK_QUEUE"]
            )

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    ), result.message
    assert result.independent_sources == 2
    assert result.counters.tokens == reported_tokens(fake), "usage comes from the responses"

    assert [request.headers["x-api-key"] for request in search.requests] == [SERPER_KEY] * 2
    assert all(f"site:{DOCS}" in json.loads(r.body)["q"] for r in search.requests)
    fetched = [(host, path) for host, path, _ in pages.requests]
    assert fetched == [
        (DOCS, "/guides/dead-letter-queues.html"),
        (DOCS, "/concepts/visibility-timeout.html"),
    ]
    assert all("gzip" in headers["Accept-Encoding"] for _, _, headers in pages.requests)

    with psycopg.connect(embedded_pg_url) as connection:
        estimated = connection.execute(
            "SELECT count(*) FILTER (WHERE estimated), count(*) "
            "FROM research.model_calls WHERE run_id = %s",
            (run_id,),
        ).fetchone()
        sources = connection.execute(
            "SELECT final_url FROM research.sources WHERE run_id = %s ORDER BY source_id",
            (run_id,),
        ).fetchall()
        rows = _every_row_of_the_run(connection, run_id)

    assert estimated == (0, result.counters.model_calls)
    assert [url for (url,) in sources] == [
        f"{base}/guides/dead-letter-queues.html",
        f"{base}/concepts/visibility-timeout.html",
    ]
    assert OPENAI_KEY not in rows and SERPER_KEY not in rows, "no secret in the ledger"
    assert OPENAI_KEY not in "".join(worker.output) and SERPER_KEY not in "".join(worker.output)


def _every_row_of_the_run(connection: psycopg.Connection[tuple[object, ...]], run_id: str) -> str:
    tables = [
        name
        for (name,) in connection.execute(
            "SELECT table_name FROM information_schema.columns "
            "WHERE table_schema = 'research' AND column_name = 'run_id'"
        ).fetchall()
    ]
    text = []
    for table in tables:
        for (row,) in connection.execute(
            f"SELECT row_to_json(t)::text FROM research.{table} t WHERE run_id = %s", (run_id,)
        ).fetchall():
            text.append(str(row))
    assert len(text) > 10
    return "\n".join(text)

"""A model that hands the worker's secrets back, in every form, in every tool argument, and a
provider that echoes them in its errors: no form reaches the ledger (any table), the Temporal
history, the worker's log, its spans (content capture on), the search provider, the fetcher or
the model's own later prompts. Each call that carried one is refused with one sentence that
repeats none, and is never run."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
from temporalio.client import Client

from activities.model.provider_errors import PROVIDER_ATTEMPTS
from activities.secrets import SECRET_REFUSAL
from runtime.settings import PROJECT_ROOT
from tests.fakes import search_servers
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, serve
from tests.fakes.page_server import PageServer
from tests.fakes.secret_forms import forms
from tests.fakes.telemetry_servers import OtlpReceiver
from tests.system.conftest import WorkerProcess, demo_brief, real_provider_env
from tests.system.test_real_providers import _every_row_of_the_run
from workflows.models import Limits, RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

OPENAI_KEY = "sk-e2e-Secret-0123456789abcdefXYZ"
SERPER_KEY = "serper-e2e-Secret-9876543210zyxw"
DOCS = "docs.harborq.example"
QUOTE = "moves the message to the dead-letter queue"
Placement = Callable[[str, str], tuple[str, dict[str, Any]]]

# Where the model puts a form: (tool, arguments) from the form and the docs' base URL.
PLACEMENTS: dict[str, Placement] = {
    "search query": lambda form, base: ("search_web", {"query": f"harbor queue {form}"}),
    "read url path": lambda form, base: ("read_page", {"url": f"{base}/guides/{form}.html"}),
    "read find": lambda form, base: ("read_page", {"source_id": "S1", "find": form}),
    "record claim": lambda form, base: ("record_evidence", _record(claim=f"Five tries {form}.")),
    "record quote": lambda form, base: ("record_evidence", _record(quote=f"{QUOTE} {form}")),
    "record passage": lambda form, base: ("record_evidence", _record(passage_id=form)),
    "finish answer": lambda form, base: ("finish_research", _finish(answer=form)),
    "finish finding": lambda form, base: ("finish_research", _finish(text=form)),
    "finish limitations": lambda form, base: ("finish_research", _finish(limitations=form)),
}


def _record(**fields: str) -> dict[str, Any]:
    quoted = {"quote": QUOTE} if "passage_id" not in fields else {}
    claim = {"claim": "After 5 delivery attempts the message is dead-lettered."}
    return {"question_id": "Q1", "source_id": "S1", "stance": "supports"} | claim | quoted | fields


def _finish(answer: str = "Five.", text: str = "Five attempts.", limitations: str = "") -> Any:
    findings = [{"text": text, "evidence_ids": ["E001"]}]
    return {"answer": answer, "findings": findings, "limitations": limitations}


# One run per group of placements (a run of every form in every placement would not fit a
# context of the size the history budget allows with that many steps).
GROUPS = {
    "search and read": ["search query", "read url path", "read find"],
    "record": ["record claim", "record quote", "record passage"],
    "finish": ["finish answer", "finish finding", "finish limitations"],
}


def _turns(base: str, group: str) -> list[Reply]:
    """Two honest steps, then each form of the model's key in each placement of `group` (one
    turn per form, its calls in parallel, its text holding the form too); the first group also
    sends each form of the search key in a query."""
    honest: list[Reply] = [
        {"tool_calls": [("search_web", {"query": "dead-letter queue delivery attempts"})]},
        {"tool_calls": [("read_page", {"url": f"{base}/guides/dead-letter-queues.html"})]},
    ]
    keyed: list[Reply] = [
        {
            "content": f"thinking about {form}",
            "tool_calls": [PLACEMENTS[name](form, base) for name in GROUPS[group]],
        }
        for form in forms(OPENAI_KEY).values()
    ]
    if group == "search and read":
        searched = [PLACEMENTS["search query"](form, base) for form in forms(SERPER_KEY).values()]
        keyed += [{"tool_calls": searched[i : i + 8]} for i in range(0, len(searched), 8)]
    return honest + keyed


def _echo() -> Reply:
    """A provider error echoing every form of both keys (retryable: each attempt is logged)."""
    every = [*forms(OPENAI_KEY).values(), *forms(SERPER_KEY).values()]
    return {"status": 500, "headers": {"retry-after-ms": "10"}, "error": " | ".join(every)}


pytestmark = [pytest.mark.system, pytest.mark.timeout(400)]

LIMITS = Limits(
    max_steps=120, max_searches=50, max_context_chars=80_000, max_tokens=2_000_000,
    deadline_seconds=240,
)  # fmt: skip


async def test_no_form_of_a_secret_is_stored_shown_or_sent(
    dev_client: Client,
    embedded_pg_url: str,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
    tmp_path: Path,
) -> None:
    brief = demo_brief().model_copy(update={"limits": LIMITS})
    runs = {group: f"secrets-{uuid.uuid4().hex[:8]}" for group in GROUPS}
    with PageServer(root=PROJECT_ROOT / "examples" / "corpus") as pages, OtlpReceiver() as otlp:
        base = f"http://{DOCS}:{pages.port}"
        # The runs go one after the other: each group's turns, then the provider's error on each
        # of its PROVIDER_ATTEMPTS attempts.
        turns = {group: _turns(base, group) for group in GROUPS}
        replies = [
            reply for group in GROUPS for reply in [*turns[group], *[_echo()] * PROVIDER_ATTEMPTS]
        ]
        asked: list[int] = []

        def script(turn: int, messages: list[Message]) -> Reply:
            asked.append(turn)  # the requests in order, whatever turn each is in its run
            return replies[len(asked) - 1]

        search = search_servers.FakeSearch(
            "serper", [(f"{base}/guides/dead-letter-queues.html", "Dead-letter queues", "5")]
        )
        fake = FakeOpenAI(script)
        with serve(fake) as model_url, search_servers.serve(search) as search_url:
            env = real_provider_env(
                worker_env,
                model_url=model_url,
                search_url=search_url,
                docs_host=DOCS,
                keys=(OPENAI_KEY, SERPER_KEY),
                no_corpus=tmp_path / "no-corpus",
            ) | {
                "RESEARCH_PARALLEL_TOOL_CALLS": "1",
                "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.url,
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
                "OTEL_BSP_SCHEDULE_DELAY": "200",
            }
            worker = spawn_worker(env)
            worker.wait_ready()
            results: dict[str, RunResult] = {}
            for group, run_id in runs.items():
                results[group] = await dev_client.execute_workflow(
                    ResearchWorkflow.run, brief, id=run_id, task_queue=env["RESEARCH_TASK_QUEUE"]
                )
            worker.stop()  # flushes its spans and logs

    histories = []
    for group, run_id in runs.items():
        _assert_refused_and_never_run(results[group], turns[group], embedded_pg_url, run_id)
        histories.append((await dev_client.get_workflow_handle(run_id).fetch_history()).to_json())
    with psycopg.connect(embedded_pg_url) as connection:
        ledger = "\n".join(_every_row_of_the_run(connection, run_id) for run_id in runs.values())
    # The X-API-KEY header carries the search key, as it must: the rest of each request is read.
    searched = [f"{r.method} {r.path} {r.query} {r.body.decode()}" for r in search.requests]
    fetched = [f"{host} {path} {headers}" for host, path, headers in pages.requests]
    assert (len(searched), len(fetched)) == (len(GROUPS), len(GROUPS)), "only the honest steps"
    places = {
        "ledger": ledger,
        "history": "\n".join(histories),
        "worker log": "".join(worker.output),
        "spans": b"\n".join(otlp.collected.raw).decode("utf-8", "replace"),
        "search provider": "\n".join(searched),
        "fetcher": "\n".join(fetched),
        "model prompts": json.dumps([request["messages"] for request in fake.requests]),
    }
    assert "answered HTTP 500" in places["worker log"], "the provider's errors were logged"
    failed = [line for line in worker.output if '"message": "decide attempt ' in line]
    assert failed and all("answered HTTP 500" in line for line in failed)
    assert "Traceback" not in places["worker log"], "one line per failed attempt, no traceback"
    assert len(otlp.collected.spans) > 10
    found = [
        (key_name, form_name, place)
        for key_name, key in (("model key", OPENAI_KEY), ("search key", SERPER_KEY))
        for form_name, form in forms(key).items()
        for place, text in places.items()
        if form in text or form.lower() in text.lower()
    ]
    assert found == []


def _assert_refused_and_never_run(
    result: RunResult, turns: list[Reply], database_url: str, run_id: str
) -> None:
    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert result.message.startswith("model provider openai answered HTTP 500 on 5 attempts")
    keyed_steps = sum(len(turn["tool_calls"]) for turn in turns[2:])
    assert result.counters.steps == 2 + keyed_steps
    assert (result.counters.searches, result.counters.page_fetches) == (1, 1), "none was run"
    assert result.counters.finish_attempts == 0 and result.evidence_count == 0
    with psycopg.connect(database_url) as connection:
        errors = [
            error
            for (error,) in connection.execute(
                "SELECT error FROM research.steps WHERE run_id = %s ORDER BY step", (run_id,)
            ).fetchall()
        ]
    assert errors == [None, None] + [SECRET_REFUSAL] * keyed_steps

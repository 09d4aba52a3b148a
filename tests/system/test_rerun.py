"""`research rerun`: a finished run again on its recorded decisions, compared with the source.

Real worker processes on a real Temporal dev server and PostgreSQL. The source runs use the
offline policy; a rerun taken by a worker configured for an OpenAI-compatible model must not send
it a single request. A tampered or missing recorded decision must show as a difference (exit 1).
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from starter.local import DEMO_BRIEF
from tests.fakes.openai_server import FakeOpenAI, Message, Reply, harborq_script, serve
from tests.system.conftest import WorkerProcess, cli_env, research

pytestmark = [pytest.mark.system, pytest.mark.timeout(240)]


@dataclass(frozen=True)
class Sources:
    env: dict[str, str]
    database: str
    completed: str  # the sample brief, through the gate
    tampered: str  # max_steps 4: its first recorded decision is edited by a test
    cut_short: str  # max_steps 4: its last recorded decision is deleted by a test


@pytest.fixture(scope="module")
def sources(
    dev_server: WorkflowEnvironment,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Sources]:
    folder = tmp_path_factory.mktemp("rerun")
    env = cli_env(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-rerun-{os.getpid()}",
        RESEARCH_STATE_DIR=str(folder / "state"),
        PYTHONUNBUFFERED="1",
    )
    short = json.loads(DEMO_BRIEF.read_text()) | {"limits": {"max_steps": 4}}
    (folder / "short.json").write_text(json.dumps(short))
    tag = uuid.uuid4().hex[:6]
    briefs = {"completed": DEMO_BRIEF, "tampered": folder / "short.json"}
    briefs["cut_short"] = briefs["tampered"]
    ids = [f"research-rerun-{name}-{tag}" for name in briefs]
    with _worker(env):  # the offline worker of the source runs and their reruns
        for run_id, brief in zip(ids, briefs.values(), strict=True):
            started = research(env, "start", str(brief), "--id", run_id, "--wait")
            ended = ("Status: completed", "Status: incomplete")
            assert any(s in started.stdout for s in ended), started.stdout + started.stderr
        yield Sources(env, embedded_pg_url, *ids)


def test_a_rerun_of_an_offline_run_is_identical(sources: Sources) -> None:
    shown = research(sources.env, "rerun", sources.completed)

    assert shown.returncode == 0, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith(f"Rerun {sources.completed}-rerun-")
    assert "no model is asked" in lines[0]
    cells = [re.split(r"\s{2,}", line[2:].strip()) for line in lines if line[:2] in ("  ", "* ")]
    table = {row[0]: row[1:] for row in cells}
    assert table["status"] == ["completed", "completed"]
    assert table["stop reason"] == ["coverage_gate_passed", "coverage_gate_passed"]
    assert table["steps"] == ["13", "13"] and table["evidence"] == ["4", "4"]
    assert not [line for line in lines if line.startswith("* ")]  # no value differs
    steps = [line for line in lines if line.strip()[:1].isdigit() and " = " in line]
    assert len(steps) == 13 + 4 + len(_report(sources, sources.completed)["findings"])
    assert lines[-1].startswith("Differences: none")


def test_a_rerun_as_json_names_the_replay_provider_in_the_ledger(sources: Sources) -> None:
    shown = research(sources.env, "rerun", sources.completed, "--json")

    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)  # stdout is the JSON alone; the "started" line is on stderr
    assert (data["identical"], data["differences"]) == (True, [])
    assert data["source"]["steps"] == data["rerun"]["steps"]
    assert data["source"]["evidence"] == data["rerun"]["evidence"]
    assert [step["tool"] for step in data["rerun"]["steps"]][-1] == "finish_research"
    assert data["rerun"]["evidence"][0]["url"].startswith("https://docs.harborq.example/")
    rerun_id = data["rerun"]["run_id"]
    assert f"Rerun {rerun_id} of {sources.completed}" in shown.stderr
    with psycopg.connect(sources.database) as conn:
        providers = conn.execute(
            "SELECT DISTINCT provider FROM research.model_calls WHERE run_id = %s", (rerun_id,)
        ).fetchall()
        brief = conn.execute(
            "SELECT brief FROM research.runs WHERE run_id = %s", (rerun_id,)
        ).fetchone()
    assert providers == [("replay",)]
    assert brief is not None and brief[0]["rerun_of"] == sources.completed


def test_a_worker_configured_for_a_model_reruns_without_asking_it(
    sources: Sources, tmp_path: Path
) -> None:
    def never(turn: int, messages: list[Message]) -> Reply:
        raise AssertionError("a rerun asked the model")

    model = FakeOpenAI(never)
    with serve(model) as model_url:
        env = sources.env | {
            "RESEARCH_TASK_QUEUE": f"research-rerun-openai-{os.getpid()}",
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": model_url,
            "OPENAI_API_KEY": "sk-test-rerun-not-a-real-key",
        }
        with _worker(env):
            shown = research(env, "rerun", sources.completed, "--json")

    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert json.loads(shown.stdout)["identical"] is True
    assert model.paths == []  # not one request reached the model


def test_a_run_a_scripted_model_made_reruns_identically_on_an_offline_worker(
    sources: Sources,
) -> None:
    """The source's decisions come from the OpenAI-compatible path (provider-reported usage,
    call ids); the rerun, on the offline worker, asks neither that model nor the offline policy."""
    model = FakeOpenAI(harborq_script)
    with serve(model) as model_url:
        env = sources.env | {
            "RESEARCH_TASK_QUEUE": f"research-rerun-scripted-{os.getpid()}",
            "RESEARCH_MODEL_PROVIDER": "openai",
            "OPENAI_BASE_URL": model_url,
            "OPENAI_API_KEY": "sk-test-rerun-not-a-real-key",
        }
        source = f"research-rerun-scripted-{uuid.uuid4().hex[:6]}"
        with _worker(env):
            started = research(env, "start", str(DEMO_BRIEF), "--id", source, "--wait")
        assert "Status: completed" in started.stdout, started.stdout + started.stderr
        asked = len(model.paths)

        shown = research(sources.env, "rerun", source, "--json")  # the offline worker's queue

        # Six tool calls and the finish, and the verifier's six claims (the answer, two findings,
        # the limitations, two required questions); none since.
        assert len(model.paths) == asked == 7 + 6 and len(model.verifier_requests) == 6
    assert shown.returncode == 0, shown.stdout + shown.stderr
    data = json.loads(shown.stdout)
    assert data["identical"] is True
    assert [step["tool"] for step in data["rerun"]["steps"]] == [
        "search_web", "read_page", "record_evidence", "search_web", "read_page",
        "record_evidence", "finish_research",
    ]  # fmt: skip
    assert data["rerun"]["answer"].startswith("After 5 failed deliveries")


def test_a_tampered_decision_shows_as_a_difference_and_exits_1(sources: Sources) -> None:
    with _owner(sources.database) as conn:
        (calls,) = conn.execute(
            "SELECT tool_calls FROM research.model_calls WHERE run_id = %s AND turn = 1",
            (sources.tampered,),
        ).fetchone() or (None,)
        assert calls[0]["name"] == "search_web"
        calls[0]["arguments"] = json.dumps({"query": "harborq visibility timeout tampered"})
        conn.execute(
            "UPDATE research.model_calls SET tool_calls = %s WHERE run_id = %s AND turn = 1",
            (Jsonb(calls), sources.tampered),
        )

    shown = research(sources.env, "rerun", sources.tampered)

    assert shown.returncode == 1, shown.stdout + shown.stderr
    lines = shown.stdout.splitlines()
    at = lines.index("Steps")
    assert lines[at + 1].startswith("    1 source: search_web {")
    assert lines[at + 2].startswith("      rerun:  search_web {")
    assert "tampered" in lines[at + 2] and "tampered" not in lines[at + 1]
    assert any(line.startswith("Differences (") for line in lines)
    assert any(line.startswith("  - step 1: search_web") for line in lines)


def test_a_turn_the_source_never_recorded_ends_the_rerun_without_a_model(sources: Sources) -> None:
    with _owner(sources.database) as conn:
        deleted = conn.execute(
            "DELETE FROM research.model_calls WHERE run_id = %s AND turn = 4", (sources.cut_short,)
        )
        assert deleted.rowcount == 1

    shown = research(sources.env, "rerun", sources.cut_short, "--json")

    assert shown.returncode == 1, shown.stdout + shown.stderr
    data = json.loads(shown.stdout)
    rerun = data["rerun"]
    assert (rerun["status"], rerun["stop_reason"]) == ("failed", "provider_error")
    assert len(rerun["steps"]) == 3 and len(data["source"]["steps"]) == 4
    said = f"replay of run {sources.cut_short}: it recorded no model decision for turn 4"
    assert said in rerun["limitations"]
    assert "status: incomplete (source) vs failed (rerun)" in data["differences"]
    assert "step 4: " in " ".join(data["differences"])


def test_rerun_of_an_unknown_or_unfinished_run_is_a_usage_error(sources: Sources) -> None:
    unknown = research(sources.env, "rerun", "research-no-such-run")

    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == (
        "error: no run with id research-no-such-run: `research runs` lists the recent runs\n"
    )


def _report(sources: Sources, run_id: str) -> dict[str, Any]:
    shown = research(sources.env, "report", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    report: dict[str, Any] = json.loads(shown.stdout)
    return report


class _worker:
    """A worker process for the length of a `with` block."""

    def __init__(self, env: dict[str, str]) -> None:
        self._env = env

    def __enter__(self) -> WorkerProcess:
        self._process = WorkerProcess(self._env)
        try:
            self._process.wait_ready()
        except BaseException:
            self.__exit__()
            raise
        return self._process

    def __exit__(self, *exc: object) -> None:
        self._process.stop()
        if self._process.process.stdout is not None:
            self._process.process.stdout.close()


def _owner(url: str) -> psycopg.Connection[Any]:
    """A connection as the database's owner, editing rows as a tamperer with that access could:
    the guard of the ledger's append-only tables lets the owner through for this session."""
    conn = psycopg.connect(url, autocommit=True)
    conn.execute("SET research.rewrite_history = 'on'")  # as a migration's backfill would
    conn.execute("SET session_replication_role = replica")  # and with triggers off altogether
    return conn

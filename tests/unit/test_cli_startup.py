"""`research --version` and `--help` import only the CLI's parser and the settings; a command
imports what it uses when it runs, and a read-only one (`status`, `runs`) none of the worker's,
the workflow's, telemetry's or the model client's modules (bench/cli_startup.py measures the time;
no timing here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from runtime.settings import PROJECT_ROOT
from starter.cli import COMMANDS, RUN_STATUSES, build_parser
from workflows.models import RunStatus

HEAVY = ("temporalio", "pydantic", "psycopg", "opentelemetry", "activities", "rich", "baselines")
# What no read-only command needs: the worker and its interceptors, telemetry's SDK and exporters,
# the workflow's module (its tools, gate and rules), the live panel, the model and search clients.
NOT_FOR_READING = (
    "temporalio.worker",
    "temporalio.contrib.opentelemetry",
    "opentelemetry.sdk",
    "runtime.exporters",
    "workflows.research",
    "workflows.gate",
    "rich",
    "openai",
    "httpx",
    "activities.model",
    "activities.research",
    "azure",
    "baselines",
    "worker",
)


def _heavy(loaded: list[str], prefixes: tuple[str, ...]) -> list[str]:
    return [name for name in loaded if any(name == p or name.startswith(f"{p}.") for p in prefixes)]


def _loaded_after(*argv: str, env: dict[str, str] | None = None) -> list[str]:
    probe = (
        "import sys, json\n"
        "from starter.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True,
        env=env,
    )  # fmt: skip
    modules: list[str] = json.loads(done.stderr.strip().splitlines()[-1])
    return modules


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("runs", "--help")])
def test_version_and_help_import_nothing_heavy(argv: tuple[str, ...]) -> None:
    loaded = _loaded_after(*argv)

    heavy = [name for name in loaded if name.split(".")[0] in HEAVY]
    assert heavy == []


def _reader_env(tmp_path: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("RESEARCH_")}
    env.pop("DATABASE_URL", None)
    env.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
    env.pop("APPLICATIONINSIGHTS_CONNECTION_STRING", None)
    # A port nothing listens on, and an empty state folder: each command goes as far as it can.
    return env | {"TEMPORAL_ADDRESS": "127.0.0.1:9", "RESEARCH_STATE_DIR": str(tmp_path / "s")}


def test_status_imports_the_client_only(tmp_path: Path) -> None:
    """`research status` reads payloads as plain JSON: no pydantic, no workflow model."""
    loaded = _loaded_after("status", "research-x", env=_reader_env(tmp_path))

    assert "temporalio.client" in loaded and "starter.status" in loaded  # it did get that far
    light = (*NOT_FOR_READING, "psycopg", "activities", "pydantic", "runtime.converter")
    assert _heavy(loaded, (*light, "workflows.models", "starter.progress")) == []


@pytest.mark.parametrize("argv", [("runs",), ("runs", "--json"), ("report", "research-x")])
def test_ledger_reads_import_no_temporal(tmp_path: Path, argv: tuple[str, ...]) -> None:
    loaded = _loaded_after(*argv, env=_reader_env(tmp_path))

    assert "activities.ledger" in loaded  # it did get that far
    assert _heavy(loaded, (*NOT_FOR_READING, "temporalio")) == []


def test_the_status_choices_are_the_run_statuses() -> None:
    assert tuple(status.value for status in RunStatus) == RUN_STATUSES


def test_status_queries_the_workflows_own_progress_query() -> None:
    from starter.status import PROGRESS_QUERY
    from workflows.research import ResearchWorkflow

    definition = getattr(ResearchWorkflow.progress, "__temporal_query_definition")
    assert definition.name == PROGRESS_QUERY


def test_every_command_the_parser_knows_has_a_function() -> None:
    import importlib

    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == set(COMMANDS)
    for module, name in COMMANDS.values():
        assert callable(getattr(importlib.import_module(module), name))


def test_status_reads_the_workflows_own_search_attributes() -> None:
    from starter.status import STATUS_ATTRIBUTE, STOP_REASON_ATTRIBUTE
    from workflows.research import STATUS_KEY, STOP_REASON_KEY

    assert (STATUS_ATTRIBUTE, STOP_REASON_ATTRIBUTE) == (STATUS_KEY, STOP_REASON_KEY)


def test_status_tells_an_unverified_run_as_the_workflow_does() -> None:
    from starter.summary import UNVERIFIED, result_summary
    from workflows import models

    assert UNVERIFIED == models.UNVERIFIED
    result = {"run_id": "r1", "status": "completed", "stop_reason": "coverage_gate_passed"}
    result |= {"counters": {"steps": 8, "searches": 2, "page_fetches": 2, "tokens": 9}}
    told = {
        verified: result_summary(result | {"verified": verified, "verifier": name})
        for verified, name in ((False, ""), (True, "openai m"), (None, ""))
    }
    assert told[False].lines[1] == f"Status: completed: {UNVERIFIED} | Stop: coverage_gate_passed"
    assert (
        told[True].lines[1]
        == told[None].lines[1]
        == "Status: completed | Stop: coverage_gate_passed"
    )
    assert [told[v].json_data()["verified"] for v in told] == [False, True, None]
    assert told[True].json_data()["verifier"] == "openai m"

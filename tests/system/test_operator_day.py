"""An operator's day without surprises (issue 25), as a user types the commands: read-only commands
read (an empty state folder or an empty database stays as it was), "no such run" is one sentence and
one exit code from every command, a running run's listing counts what it did so far, and a search
that matches nothing does not claim an indexed host is empty."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from runtime.settings import PROJECT_ROOT
from starter.local import DEMO_BRIEF
from starter.search import NOTHING_INDEXED
from tests.conftest import free_port
from tests.system.conftest import cli_env, research
from workflows.contracts import StepRecord
from workflows.models import Brief, Decision, ToolCall, Usage
from workflows.scope import RunScope

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]

NO_SUCH_RUN = "error: no run with id {}: `research runs` lists the recent runs\n"


def _env(**settings: str) -> dict[str, str]:
    env = cli_env(**settings)
    for name in ("DATABASE_URL", "TEMPORAL_ADDRESS"):
        if name not in settings:
            env.pop(name, None)
    return env


def _read_only_commands(run_id: str, folder: Path) -> list[list[str]]:
    return [
        ["runs"],
        ["runs", "--json"],
        ["report", run_id],
        ["report", run_id, "--json"],
        ["status", run_id],
        ["status", run_id, "--json"],
        ["export", run_id, str(folder / "export")],
        ["audit", run_id],
        ["search", "dead-letter queue", "--allow", "docs.harborq.example"],
    ]


def test_read_only_commands_on_an_empty_state_folder_create_nothing(
    dev_server: WorkflowEnvironment, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    env = _env(
        RESEARCH_STATE_DIR=str(state),
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        RESEARCH_SEARCH_PROVIDER="corpus",
    )
    for command in _read_only_commands("research-none", tmp_path):
        done = research(env, *command)

        assert not state.exists(), f"research {' '.join(command)} created {state}"
        assert not (tmp_path / "export").exists()
        if command[0] == "status":  # Temporal only: it has no such run
            assert (done.returncode, done.stderr) == (2, NO_SUCH_RUN.format("research-none"))
            continue
        assert done.returncode == 1, command
        assert done.stderr.startswith(f"error: no ledger in {state / 'pg'} "), done.stderr
        assert "`research dev` or `research init-db` creates one there" in done.stderr
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_read_only_commands_on_a_database_without_a_ledger_leave_it_empty(
    embedded_pg_url: str, tmp_path: Path
) -> None:
    name = f"empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(embedded_pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = psycopg.conninfo.make_conninfo(embedded_pg_url, dbname=name)
    env = _env(DATABASE_URL=url, RESEARCH_STATE_DIR=str(tmp_path / "state"))

    for command in [["runs"], ["report", "research-none"], ["audit", "research-none"]]:
        done = research(env, *command)
        assert done.returncode == 1, command
        assert done.stderr.startswith("error: no ledger in the database at "), done.stderr
        assert f"/{name}: `research init-db` creates its tables there" in done.stderr

    with psycopg.connect(url) as conn:
        schemas = conn.execute(
            "SELECT count(*) FROM pg_namespace WHERE nspname = 'research'"
        ).fetchone()
    assert schemas == (0,)
    assert not (tmp_path / "state").exists()


@pytest.fixture(scope="module")
def stack_env(
    dev_server: WorkflowEnvironment,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("operator")
    return _env(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-operator-{os.getpid()}",
        RESEARCH_STATE_DIR=str(folder / "state"),
        RESEARCH_SEARCH_PROVIDER="corpus",
    )


EVERY_COMMAND_ON_A_RUN = {
    "status": ["status", "{id}"],
    "status --json": ["status", "{id}", "--json"],
    "report": ["report", "{id}"],
    "report --json": ["report", "{id}", "--json"],
    "cancel": ["cancel", "{id}"],
    "signal finish": ["signal", "{id}", "finish"],
    "signal guidance": ["signal", "{id}", "guidance", "read", "the", "docs"],
    "signal seed": ["signal", "{id}", "seed", "https://docs.harborq.example/"],
    "extend": ["extend", "{id}", "--steps", "30"],
    "export": ["export", "{id}", "{dir}"],
    "audit": ["audit", "{id}"],
    "replay": ["replay", "{id}"],
    "rerun": ["rerun", "{id}"],
}


@pytest.mark.parametrize("name", sorted(EVERY_COMMAND_ON_A_RUN))
def test_no_such_run_is_one_sentence_and_exit_2_from_every_command(
    stack_env: dict[str, str], tmp_path: Path, name: str
) -> None:
    run_id = f"research-missing-{uuid.uuid4().hex[:6]}"
    command = [
        part.format(id=run_id, dir=tmp_path / "out") for part in EVERY_COMMAND_ON_A_RUN[name]
    ]

    done = research(stack_env, *command)

    assert (done.returncode, done.stdout, done.stderr) == (2, "", NO_SUCH_RUN.format(run_id))
    assert not (tmp_path / "out").exists()


async def test_a_running_run_lists_the_steps_and_tokens_it_spent_so_far(
    stack_env: dict[str, str], corpus_ledger: Ledger
) -> None:
    run_id = f"research-live-{uuid.uuid4().hex[:6]}"
    brief = Brief.model_validate_json(DEMO_BRIEF.read_text())
    assert await corpus_ledger.start_run(run_id, brief, "2026-01-02T03:04:05+00:00")
    for turn in (1, 2):
        call = ToolCall(id=f"c{turn}", name="search_web", arguments='{"query": "q"}')
        usage = Usage(input_tokens=1000 * turn, output_tokens=7)
        await corpus_ledger.record_model_call(
            run_id, turn, Decision(tool_calls=[call], usage=usage), "offline", 0
        )
        step = StepRecord(
            scope=RunScope.record_of(run_id, "", turn, turn, ""),
            tool="search_web",
            arguments=call.arguments,
            ok=True,
        )
        await corpus_ledger.record_step(step)

    listed = research(stack_env, "runs", "--json", "--status", "running", "--limit", "100")

    assert listed.returncode == 0, listed.stderr
    run = next(item for item in json.loads(listed.stdout) if item["run_id"] == run_id)
    assert (run["status"], run["steps"], run["tokens"]) == ("running", 2, 3014)
    table = research(stack_env, "runs", "--status", "running", "--limit", "100").stdout
    line = next(line for line in table.splitlines() if line.startswith(run_id))
    assert line.split()[2:6] == ["-", "2", "0", "3014"]  # stop, steps, evidence, tokens


def test_a_search_of_common_words_does_not_claim_the_host_is_empty(
    stack_env: dict[str, str],
) -> None:
    common = research(stack_env, "search", "the and of", "--allow", "docs.harborq.example")
    assert common.returncode == 0, common.stderr
    assert common.stdout.startswith("no results: no document on these hosts matches the query")
    assert "docs.harborq.example indexed" in common.stdout

    empty = research(stack_env, "search", "the and of", "--allow", "nothing.example")
    assert empty.stdout.strip() == NOTHING_INDEXED


@contextmanager
def _terminal_sigint() -> Iterator[None]:
    """Children started inside get Ctrl-C as on a terminal even when this runner inherited SIGINT
    ignored (a background job: `make test &`): an ignored signal stays ignored across exec, a
    handled one is reset to the default, which Python turns into KeyboardInterrupt (asyncio: a
    cancel of the command)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_ctrl_c_during_start_wait_says_the_run_goes_on(
    stack_env: dict[str, str], tmp_path: Path
) -> None:
    run_id = f"research-ctrlc-{uuid.uuid4().hex[:6]}"
    env = stack_env | {"RESEARCH_TASK_QUEUE": f"nobody-polls-{run_id}", "PYTHONUNBUFFERED": "1"}
    with _terminal_sigint():
        command = ["start", str(DEMO_BRIEF), "--id", run_id, "--wait"]
        waiting = subprocess.Popen(
            [sys.executable, "-m", "starter.cli", *command],
            cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
    try:
        assert waiting.stdout is not None
        assert waiting.stdout.readline().startswith(f"Started run {run_id}")
        waiting.send_signal(signal.SIGINT)
        _, stderr = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.communicate()  # reads and closes its pipes: none left for a later test's GC

    assert waiting.returncode == 130
    assert f"stopped following run {run_id}; the run goes on: `research status {run_id}`" in stderr
    assert "Traceback" not in stderr
    still = research(stack_env, "status", run_id, "--json")
    assert json.loads(still.stdout)["status"] == "running"
    assert research(stack_env, "cancel", run_id).returncode == 0


@dataclass
class DevStack:
    env: dict[str, str]
    printed: list[str]
    port: int


@pytest.fixture(scope="module")
def dev_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevStack]:
    """`research dev` from a state folder of its own, on ports of its own, until the module ends."""
    folder = tmp_path_factory.mktemp("dev-stack")
    port, ui_port = free_port(), free_port()
    dev_env = _env(
        RESEARCH_STATE_DIR=str(folder / "dev"),
        TEMPORAL_ADDRESS=f"127.0.0.1:{port}",
        RESEARCH_UI_PORT=str(ui_port),
        PYTHONUNBUFFERED="1",
    )
    with _terminal_sigint():
        dev = subprocess.Popen(
            [sys.executable, "-m", "starter.cli", "dev"],
            cwd=PROJECT_ROOT, env=dev_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True,
        )  # fmt: skip
    try:
        assert dev.stdout is not None
        printed = []
        for line in dev.stdout:
            printed.append(line)
            if line.strip() == "Ctrl-C stops everything.":
                break
        assert printed and printed[-1].strip() == "Ctrl-C stops everything.", "".join(printed)
        yield DevStack(dev_env, printed, port)
    finally:
        dev.send_signal(signal.SIGINT)
        try:
            dev.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            dev.kill()
            dev.communicate()


def test_a_demo_beside_research_dev_on_the_same_server_runs_on_its_own_queue(
    dev_stack: DevStack, tmp_path: Path
) -> None:
    """`research dev` from one state folder, `research demo` from another on the same Temporal
    address: the demo reuses the server, says so, runs on a task queue of its own (the dev stack's
    worker cannot take its run) and completes; the dev stack's hint, pasted into a terminal with
    nothing set, runs a brief on the dev stack to its end."""
    dev_env, printed, port = dev_stack.env, dev_stack.printed, dev_stack.port
    ui_port = dev_env["RESEARCH_UI_PORT"]
    hint = next(line.strip() for line in printed if line.strip().startswith("export "))
    assert f"TEMPORAL_ADDRESS=127.0.0.1:{port}" in hint
    assert f"RESEARCH_STATE_DIR={dev_env['RESEARCH_STATE_DIR']}" in hint
    assert f"RESEARCH_UI_PORT={ui_port}" in hint

    demo_env = dev_env | {"RESEARCH_STATE_DIR": str(tmp_path / "demo")}
    demo = research(demo_env, "demo", timeout=240)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert f"Temporal:     127.0.0.1:{port} (reused: a Temporal server" in demo.stdout
    assert f"embedded, in {tmp_path / 'demo' / 'pg'}" in demo.stdout
    queue = re.search(r"^Task queue:   (research-demo-[0-9a-f]{8})$", demo.stdout, re.M)
    assert queue, demo.stdout
    assert (
        "Status: completed: rules only, meaning not checked | Stop: coverage_gate_passed"
        in demo.stdout
    )

    second = _env(PATH=os.environ["PATH"])  # a new terminal: only what the hint exports
    second |= dict(part.split("=", 1) for part in shlex.split(hint)[1:])
    mine = research(second, "start", str(DEMO_BRIEF), "--wait", timeout=240)
    assert mine.returncode == 0, mine.stdout + mine.stderr
    assert "Status: completed" in mine.stdout
    listed = research(second, "runs", "--json")
    run_ids = {run["run_id"] for run in json.loads(listed.stdout)}
    demo_run = re.search(r"^Run: (\S+)$", demo.stdout, re.M)
    assert demo_run and demo_run[1] not in run_ids  # the demo's run is in the demo's ledger


def test_a_second_research_dev_on_the_same_server_refuses_naming_the_first(
    dev_stack: DevStack, tmp_path: Path
) -> None:
    """A second `research dev` (another state folder, the same Temporal address and task queue)
    would share the first one's queue, so each worker would take the other's runs: it refuses in
    one sentence that names the first stack's worker and its state folder, before it creates or
    starts anything."""
    other = dev_stack.env | {"RESEARCH_STATE_DIR": str(tmp_path / "second")}

    done = research(other, "dev", timeout=60)

    first_state = dev_stack.env["RESEARCH_STATE_DIR"]
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith(
        f"error: another stack already serves task queue research on the Temporal server at "
        f"127.0.0.1:{dev_stack.port} (worker "
    ), done.stderr
    assert f"@{socket.gethostname()} research dev {first_state}), so its worker" in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "second").exists()

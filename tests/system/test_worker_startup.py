"""A worker started in a storm: it waits for Temporal and PostgreSQL with logged back-off, then
either works or exits 1 with one sentence naming what it could not reach (never an abort)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest
from temporalio.client import Client

from runtime.database import apply_migrations, start_embedded_postgres
from runtime.settings import PROJECT_ROOT
from starter.briefs import load_brief
from starter.local import DEMO_BRIEF
from tests.conftest import free_port
from tests.fakes.postgres import restart_postgres, stop_postgres
from tests.system.conftest import WorkerProcess
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(240)]

STARTS = 3  # `python -m bench.worker_start` starts it 20 times


def test_a_worker_started_with_temporal_stopped_exits_1_with_one_sentence(
    worker_env: dict[str, str],
) -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens: Temporal is stopped
    env = worker_env | {"TEMPORAL_ADDRESS": address, "RESEARCH_STARTUP_WAIT_SECONDS": "1.5"}
    starts = [
        subprocess.Popen(
            [sys.executable, str(PROJECT_ROOT / "worker.py")],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(STARTS)
    ]
    for started in starts:
        out, err = started.communicate(timeout=120)
        assert started.returncode == 1, f"exit {started.returncode}:\n{err}"  # not -6 (SIGABRT)
        lines = err.strip().splitlines()
        assert lines[-1] == (
            f"error: cannot reach Temporal at {address} (waited 1.5 s): start it with "
            "`research dev` or set TEMPORAL_ADDRESS"
        ), err
        waits = [line for line in lines if f"waiting for Temporal at {address}" in line]
        assert len(waits) >= 2, err  # the back-off was logged, attempt by attempt
        assert "Fatal Python error" not in err and out == ""


@pytest.fixture
def small_postgres(tmp_path: Path) -> Iterator[str]:
    """A PostgreSQL of the test's own with max_connections = 6, migrated."""
    data = tmp_path / "pg"
    server, url = start_embedded_postgres(data)
    try:
        apply_migrations(url)
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET max_connections = 6")
        restart_postgres(data)  # max_connections takes a restart
        yield url
    finally:
        server.cleanup()
        stop_postgres(data)  # the restarted server is not the one pgserver started


def hold_every_slot(url: str, stack: ExitStack) -> list[psycopg.Connection[Any]]:
    """Connections (as the superuser, who may take the reserved slots too) until the server
    refuses one for want of a slot."""
    held: list[psycopg.Connection[Any]] = []
    while True:
        try:
            held.append(stack.enter_context(psycopg.connect(url, autocommit=True)))
        except psycopg.OperationalError as error:
            assert "too many clients" in str(error) or "reserved" in str(error), error
            return held
        assert len(held) < 20, "the server never ran out of slots"


async def test_a_worker_started_with_every_slot_held_waits_then_works(
    small_postgres: str,
    worker_env: dict[str, str],
    dev_client: Client,
    spawn_worker: type[WorkerProcess],
) -> None:
    env = worker_env | {"DATABASE_URL": small_postgres, "RESEARCH_STARTUP_WAIT_SECONDS": "120"}
    with ExitStack() as stack:
        held = hold_every_slot(small_postgres, stack)
        worker = spawn_worker(env)
        waited = worker.wait_for_line("waiting for PostgreSQL at", timeout=90)
        assert "no free connection slot (too many clients already)" in waited
        held.pop().close()  # one slot comes free: the worker takes it and starts
        worker.wait_ready(timeout=90)
        queue = env["RESEARCH_TASK_QUEUE"]
        result = await dev_client.execute_workflow(
            ResearchWorkflow.run, load_brief(DEMO_BRIEF), id=f"{queue}-slots", task_queue=queue
        )
        assert result.counters.steps > 0  # the worker ran the whole investigation on its one slot
        assert worker.process.poll() is None

"""A whole investigation by a worker process that signs in as the worker's role: every write it
makes is allowed, and afterwards that role can change none of the run's history. Also the
embedded server's default: `research init-db` makes the role, and a worker signs in as it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from temporalio.client import Client

from activities.ledger import Ledger
from activities.search import index_corpus
from runtime.database import DatabaseError, open_pool, worker_database_url
from runtime.privileges import LedgerRoles, url_as
from runtime.settings import Settings
from starter.briefs import load_brief
from starter.cli import main
from starter.local import DEMO_BRIEF
from tests.fakes.postgres import granted_roles
from tests.system.conftest import WorkerProcess
from workflows.models import RunStatus
from workflows.research import ResearchWorkflow

pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]
HISTORY = ("model_calls", "steps", "searches", "sources", "passages", "evidence", "reports")


@pytest.fixture
def roles(pg_url: str) -> Iterator[LedgerRoles]:
    with granted_roles(pg_url) as made:
        yield made


async def test_a_worker_signed_in_as_its_role_completes_a_run_and_cannot_rewrite_it(
    pg_url: str,
    roles: LedgerRoles,
    dev_client: Client,
    worker_env: dict[str, str],
    spawn_worker: type[WorkerProcess],
) -> None:
    settings = Settings()
    pool = await open_pool(pg_url)  # the corpus is the owner's to index
    try:
        await index_corpus(Ledger(pool), settings.corpus_dir, max_chars=settings.max_snapshot_chars)
    finally:
        await pool.close()
    worker_url = url_as(pg_url, roles.worker)
    env = {**worker_env, "DATABASE_URL": pg_url, "RESEARCH_WORKER_DATABASE_URL": worker_url}
    spawn_worker(env).wait_ready()
    run_id = f"least-privilege-{uuid.uuid4().hex[:8]}"

    result = await dev_client.execute_workflow(
        ResearchWorkflow.run,
        load_brief(DEMO_BRIEF),
        id=run_id,
        task_queue=env["RESEARCH_TASK_QUEUE"],
    )

    assert result.status == RunStatus.COMPLETED, result.message
    with psycopg.connect(pg_url, autocommit=True) as owner:
        signed_in = owner.execute(
            "SELECT DISTINCT usename FROM pg_stat_activity WHERE datname = current_database()"
        ).fetchall()
        assert (roles.worker,) in signed_in  # the worker's pool: its role, not the owner's
        for table in HISTORY:
            count = sql.SQL("SELECT count(*) FROM {} WHERE run_id = %s").format(
                sql.Identifier("research", table)
            )
            assert owner.execute(count, (run_id,)).fetchone() != (0,), table
    await asyncio.to_thread(_refused_as_worker, worker_url, run_id)


def _refused_as_worker(worker_url: str, run_id: str) -> None:
    with psycopg.connect(worker_url, autocommit=True) as worker:
        for statement in (
            "UPDATE research.evidence SET quote = 'Harbor Queue never fails.' WHERE run_id = %s",
            "DELETE FROM research.steps WHERE run_id = %s",
            "UPDATE research.runs SET question = 'another question' WHERE run_id = %s",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                worker.execute(statement, (run_id,))
        status = worker.execute("SELECT status FROM research.runs WHERE run_id = %s", (run_id,))
        assert status.fetchone() == ("completed",)


def test_on_the_embedded_server_init_db_makes_the_role_the_worker_signs_in_as(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RESEARCH_STATE_DIR", str(tmp_path / "state"))
    settings = Settings.from_env()
    with pytest.raises(DatabaseError, match="no role research_worker for the worker yet: run"):
        worker_database_url(settings)

    assert main(["init-db"]) == 0
    assert "created roles: research_worker, research_reader" in capsys.readouterr().out

    url, server = worker_database_url(settings)
    try:
        assert server is not None
        with psycopg.connect(url) as worker:
            assert worker.execute("SELECT current_user").fetchone() == ("research_worker",)
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                worker.execute("DELETE FROM research.runs")
    finally:
        if server is not None:
            server.cleanup()

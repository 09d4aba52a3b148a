"""A worker pointed at a database without the ledger's schema refuses in one sentence, before it
polls, instead of printing `worker ready` and failing every write."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from runtime.database import (
    apply_migrations,
    migrations,
    pending_migrations,
    start_embedded_postgres,
)
from tests.system.conftest import WorkerProcess


@pytest.mark.timeout(120)
async def test_a_worker_refuses_a_database_without_the_schema(
    worker_env: dict[str, str], spawn_worker: type[WorkerProcess], tmp_path: Path
) -> None:
    server, empty = start_embedded_postgres(tmp_path / "empty")
    try:
        assert await pending_migrations(empty) == [m.version for m in migrations()]
        worker = spawn_worker({**worker_env, "DATABASE_URL": empty})
        assert worker.process.wait(timeout=60) == 1
        time.sleep(0.2)  # noqa: ASYNC251 (its output pump to drain)
        output = "".join(worker.output)
        assert "worker ready" not in output
        assert output.strip() == (
            f"error: the ledger database lacks {len(migrations())} of the schema's migrations "
            f"(first: {migrations()[0].version}): run `research init-db` with the same "
            "DATABASE_URL first"
        )
        apply_migrations(empty)
        assert await pending_migrations(empty) == []
    finally:
        server.cleanup()

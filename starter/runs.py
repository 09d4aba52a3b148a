"""Commands on runs through a Temporal server: start, status, report, signal, extend, cancel."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import uuid
from typing import TYPE_CHECKING, Any

from temporalio.client import (
    Client,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from runtime.settings import Settings
from runtime.temporal import connect
from starter.briefs import load_brief
from starter.errors import EXIT_USAGE, CliError, no_such_run
from starter.progress import (
    Summary,
    WorkerWatch,
    closed_summary,
    follow,
    progress_summary,
    query_progress,
    result_summary,
)
from workflows.cleaning import as_text
from workflows.hosts import has_credentials, without_credentials
from workflows.models import (
    Brief,
    ExtendLimitsInput,
    FinishNowInput,
    GuidanceInput,
    RefusedSeed,
    RunResult,
    RunStatus,
    SeedsAdded,
    SeedUrlsInput,
)

if TYPE_CHECKING:
    # The ledger (psycopg, its pool, its spans) is imported only by a command that reads it; the
    # workflow's module (its tools, gate and rules) only by one that starts or steers a run:
    # `research status` reads a run by its query's name (bench/cli_startup.py).
    from activities.ledger import Ledger

STATIC_SUMMARY_CHARS = 200


def new_run_id() -> str:
    return f"research-{uuid.uuid4().hex[:8]}"


def web_ui_link(settings: Settings, run_id: str) -> str:
    return (
        f"http://localhost:{settings.ui_port}/namespaces/{settings.temporal_namespace}"
        f"/workflows/{run_id}"
    )


async def start_run(
    client: Client, settings: Settings, brief: Brief, run_id: str
) -> WorkflowHandle[Any, RunResult]:
    from workflows.research import ResearchWorkflow

    try:
        return await client.start_workflow(
            ResearchWorkflow.run,
            brief,
            id=run_id,
            task_queue=settings.task_queue,
            # The id is the ledger's run key: a second run under it would mix two runs' rows.
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            # The Web UI's summary of the run: its question (the Temporal CLI: --static-summary).
            static_summary=brief.question[:STATIC_SUMMARY_CHARS],
            static_details=static_details(brief, run_id),
        )
    except WorkflowAlreadyStartedError:
        raise CliError(f"a run with id {run_id} already exists: pick another --id") from None


def static_details(brief: Brief, run_id: str) -> str:
    """The Web UI's fixed details of a run (Markdown): what it must answer, where it may read,
    its bounds, and the commands that follow it and print its report."""
    questions = "\n".join(
        f"- {question.id}{'' if question.required else ' (optional)'}: "
        f"{as_text(question.text)[:STATIC_SUMMARY_CHARS]}"
        for question in brief.questions
    )
    limits = brief.limits
    return (
        f"{questions}\n\nHosts: {', '.join(brief.allowed_hosts)}\n\n"
        f"Limits: {limits.max_steps} steps, {limits.max_searches} searches, "
        f"{limits.max_page_fetches} pages, {limits.max_tokens} tokens, "
        f"{limits.deadline_seconds} s\n\n"
        f"While it runs: `research status {run_id}`; once it ends: `research report {run_id}` "
        "(the run's own outcome is its ResearchStatus: Temporal's Completed includes incomplete "
        "and failed runs)"
    )


async def start(settings: Settings, args: argparse.Namespace) -> int:
    brief = load_brief(args.brief)  # before any connection: a bad brief starts nothing
    client = await connect(settings)
    handle = await start_run(client, settings, brief, args.id or new_run_id())
    print(f"Started run {handle.id} on task queue {settings.task_queue}", flush=True)
    if not args.wait:
        print(
            f"Follow it: research status {handle.id}  |  Web UI: {web_ui_link(settings, handle.id)}"
        )
        return 0
    from starter.live import display_for

    try:
        summary = await follow(
            handle,
            display=display_for(sys.stdout, handle.id),  # a live panel on a terminal, else lines
            workers=WorkerWatch(client, settings.task_queue),
        )
    except asyncio.CancelledError:  # Ctrl-C: this command stops waiting, the run does not stop
        print(
            f"\nstopped following run {handle.id}; the run goes on: `research status "
            f"{handle.id}` (or `research report {handle.id}` once it ends), "
            f"`research cancel {handle.id}` stops it",
            file=sys.stderr,
            flush=True,
        )
        raise
    return await finish_output(settings, summary, handle.id)


async def finish_output(
    settings: Settings, summary: Summary, run_id: str, ledger: Ledger | None = None
) -> int:
    """The summary, then the report; exit 0 only for a completed run."""
    print()
    print(summary.text())
    print()
    from starter.review import print_report

    await print_report(settings, run_id, ledger)
    return 0 if summary.completed else 1


async def status(settings: Settings, args: argparse.Namespace) -> int:
    handle, state = await _existing(settings, args.id)
    summary = await _summary(handle, state)
    print(json.dumps(summary.json_data(), indent=2) if args.json else summary.text())
    return 0


async def _summary(handle: WorkflowHandle[Any, RunResult], state: str) -> Summary:
    if state == "completed":
        return result_summary(await handle.result())
    progress = await query_progress(handle)
    if progress is not None and state != "running" and progress.status == RunStatus.RUNNING:
        # Closed before the workflow recorded an outcome (cancelled early, terminated, ...).
        progress = progress.model_copy(update={"status": _ended(state)})
    if progress is not None:
        return progress_summary(progress, handle.id)
    return closed_summary(handle.id, _ended(state))


def _ended(state: str) -> str:
    """Temporal's closed states in this project's spelling (DESIGN.md, Outcomes)."""
    return {"canceled": "cancelled", "timed_out": "timed out"}.get(state, state)


async def report(settings: Settings, args: argparse.Namespace) -> int:
    from starter.review import print_report

    await print_report(settings, args.id)
    return 0


async def signal(settings: Settings, args: argparse.Namespace) -> int:
    from workflows.research import ResearchWorkflow

    handle = await _running(settings, args.id)
    if args.signal == "guidance":
        await handle.signal(ResearchWorkflow.add_guidance, GuidanceInput(text=" ".join(args.text)))
    elif args.signal == "seed":
        return await add_seeds(handle, args.urls)
    else:
        await handle.signal(ResearchWorkflow.finish_now, FinishNowInput(reason=args.reason))
    print(f"Sent {args.signal} to run {args.id}")
    return 0


async def add_seeds(handle: WorkflowHandle[Any, RunResult], urls: list[str]) -> int:
    """Seed URLs through the `add_seeds` update: the run says which it took and why it refused
    each other one (exit 1 when any was refused). A URL with credentials is never sent."""
    added = SeedsAdded()
    sent = []
    for url in urls:
        if has_credentials(url):
            shown = without_credentials(url)
            added.refused.append(RefusedSeed(url=shown, reason="carries a user name or password"))
        else:
            sent.append(url)
    if sent:
        from workflows.research import ResearchWorkflow

        answer = await handle.execute_update(ResearchWorkflow.add_seeds, SeedUrlsInput(urls=sent))
        added = answer.model_copy(update={"refused": [*added.refused, *answer.refused]})
    for url in added.accepted:
        print(f"Added seed URL {url} to run {handle.id}")
    for url in added.known:
        print(f"Seed URL {url} was already a seed of run {handle.id}")
    for refused in added.refused:
        print(f"Refused seed URL {refused.url}: it {refused.reason}", file=sys.stderr)
    return 1 if added.refused else 0


async def extend(settings: Settings, args: argparse.Namespace) -> int:
    request = ExtendLimitsInput(
        max_steps=args.steps,
        max_searches=args.searches,
        max_page_fetches=args.pages,
        max_tokens=args.tokens,
        deadline_seconds=args.deadline,
    )
    if not request.model_dump(exclude_none=True):
        raise CliError(
            "extend needs at least one of --steps --searches --pages --tokens --deadline",
            EXIT_USAGE,
        )
    from workflows.research import ResearchWorkflow

    handle = await _running(settings, args.id)
    try:
        limits = await handle.execute_update(ResearchWorkflow.extend_limits, request)
    except WorkflowUpdateFailedError as error:
        reason = getattr(error.cause, "message", None) or str(error.cause)
        raise CliError(f"run {args.id} refused the new limits: {reason}") from None
    values = ", ".join(f"{name} {value}" for name, value in limits.model_dump().items())
    print(f"Limits of run {args.id}: {values}")
    return 0


async def cancel(settings: Settings, args: argparse.Namespace) -> int:
    handle = await _running(settings, args.id)
    await handle.cancel()
    print(f"Cancellation requested for run {args.id}: it saves a partial report and ends cancelled")
    return 0


async def _existing(settings: Settings, run_id: str) -> tuple[WorkflowHandle[Any, RunResult], str]:
    """The run's handle and its Temporal status (`running`, `completed`, ...)."""
    client = await connect(settings)
    handle = client.get_workflow_handle(run_id, result_type=RunResult)
    try:
        description = await handle.describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise no_such_run(run_id) from None
        raise
    state = description.status.name.lower() if description.status else "unknown"
    return handle, state


async def _running(settings: Settings, run_id: str) -> WorkflowHandle[Any, RunResult]:
    """A run that can still be steered; an ended one is a one-sentence error."""
    handle, state = await _existing(settings, run_id)
    if state != "running":
        # The run's own outcome (`incomplete`, ...), not Temporal's word for a closed workflow.
        summary = await _summary(handle, state)
        stop = summary.data.get("stop_reason")
        ended = f"{summary.status}, {stop}" if stop else summary.status
        raise CliError(f"run {run_id} has already ended ({ended}): it can no longer change")
    return handle

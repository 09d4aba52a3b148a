"""Commands on runs through a Temporal server: start, status, report (steering: `starter.steer`)."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import unicodedata
import uuid
from typing import TYPE_CHECKING, Any

from temporalio.client import Client, WorkflowHandle
from temporalio.common import SearchAttributeKey, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from runtime.settings import Settings
from runtime.temporal import connect
from starter.briefs import load_brief
from starter.errors import EXIT_USAGE, CliError
from starter.links import web_ui_link
from starter.live import PlainDisplay
from starter.progress import (
    NO_WORKER_CHECK,
    Summary,
    WorkerWatch,
    follow,
)
from workflows.cleaning import as_text
from workflows.hosts import url_host
from workflows.models import Brief, RunResult

if TYPE_CHECKING:
    # The ledger (psycopg, its pool, its spans) is imported only by a command that reads it; the
    # workflow's module (its tools, gate and rules) only by one that starts or steers a run:
    # `research status` reads a run by its query's name (bench/cli_startup.py).
    from activities.ledger import Ledger

STATIC_SUMMARY_CHARS = 200
# The workflow's search attributes, by name (tests/unit/test_cli_startup.py keeps them its own).
STATUS_ATTRIBUTE = SearchAttributeKey.for_keyword("ResearchStatus")
STOP_REASON_ATTRIBUTE = SearchAttributeKey.for_keyword("ResearchStopReason")


RUN_ID_WORDS = 3  # content words of the question in a run's id
RUN_ID_WORD_CHARS = 20
_ID_WORD = re.compile(r"[a-z0-9]+")


def new_run_id(question: str = "") -> str:
    """A run's id, its workflow id: `research-`, the question's first content words and a few
    random hex digits (`research-hybridcache-replace-redis-1fd3a2`), so that the Web UI's list
    and `research runs` tell runs apart by what they ask; `research-<8 hex>` without a question."""
    from workflows.substance import STOPWORDS  # here: `research status` never needs it

    ascii_text = unicodedata.normalize("NFKD", question).encode("ascii", "ignore").decode()
    words = [
        word
        for word in _ID_WORD.findall(ascii_text.lower())
        if len(word) > 1 and word not in STOPWORDS
    ]
    named = "".join(f"{word[:RUN_ID_WORD_CHARS]}-" for word in words[:RUN_ID_WORDS])
    return f"research-{named}{uuid.uuid4().hex[: 6 if named else 8]}"


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
        # Bad input (docs/operations.md, Exit codes): the id names a run already.
        raise CliError(
            f"a run with id {run_id} already exists: pick another --id", EXIT_USAGE
        ) from None


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
        f"Limits at the start: {limits.max_steps} steps, {limits.max_searches} searches, "
        f"{limits.max_page_fetches} pages, {limits.max_tokens} tokens, "
        f"{limits.deadline_seconds} s (`research extend` raises them: the current details and "
        f"`research status {run_id}` show the limits now)\n\n"
        f"While it runs: `research status {run_id}`; once it ends: `research report {run_id}` "
        "(the run's own outcome is its ResearchStatus: Temporal's Completed includes incomplete "
        "and failed runs)"
    )


async def start(settings: Settings, args: argparse.Namespace) -> int:
    brief = load_brief(args.brief)  # before any connection: a bad brief starts nothing
    if getattr(args, "lane", None):
        brief = brief.model_copy(update={"lane": args.lane})
    _refuse_seeds_not_in_corpus(settings, args.brief, brief)
    client = await connect(settings)
    handle = await start_run(client, settings, brief, args.id or new_run_id(brief.question))
    print(f"Started run {handle.id} on task queue {settings.task_queue}", flush=True)
    if not args.wait:
        print(
            f"Follow it: research status {handle.id}  |  Web UI: {web_ui_link(settings, handle.id)}"
        )
        await WorkerWatch(client, settings.task_queue, timeout=NO_WORKER_CHECK).check(
            PlainDisplay(sys.stdout)
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


def _refuse_seeds_not_in_corpus(settings: Settings, path: str, brief: Brief) -> None:
    """A seed URL on a host the local corpus serves that the corpus lacks would be read as a 404
    after a step: refused here, before anything starts (hosts on the web are not asked)."""
    if not brief.seed_urls:
        return
    from activities.pages.corpus_transport import CorpusTransport

    corpus = CorpusTransport(settings.corpus_dir)
    for url in brief.seed_urls:
        if corpus.lacks(url):
            raise CliError(
                f"brief {path}: seed URL {url} is not in the local corpus "
                f"({corpus.folder(url_host(url) or '')} holds no such page), so no run could read "
                "it",
                EXIT_USAGE,
            )


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


async def report(settings: Settings, args: argparse.Namespace) -> int:
    from starter.review import print_report

    await print_report(settings, args.id)
    return 0

"""Commands that read the ledger: `runs` (which also asks Temporal for runs no worker has taken
yet, `starter.pending`), `report` (Markdown or JSON)."""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from activities.ledger import Ledger, RunListing, RunRows
from composition.ledger import open_existing_ledger
from runtime.settings import Settings
from starter.errors import EXIT_USAGE, CliError, no_such_run
from starter.links import web_ui_link
from starter.pending import PendingRun, pending_runs
from workflows.cleaning import for_terminal, json_for_terminal
from workflows.models import Finding, RunStatus
from workflows.verification import Verification

PENDING = "pending"  # a run Temporal knows and no worker has taken: not in the ledger yet
QUESTION_CHARS = 48  # the question column of `research runs`
NUMBER_COLUMNS = (3, 4, 5)  # steps, evidence, tokens: right-aligned


class QuotedEvidence(BaseModel):
    """A cited piece of evidence with its quote and where it was read: what `--json` shows."""

    id: str
    question_id: str
    stance: str
    claim: str
    quote: str
    passage_id: str | None = None
    source_id: str
    url: str
    final_url: str = ""
    title: str = ""
    content_hash: str = ""
    start: int
    end: int


class ReportView(BaseModel):
    """The report as JSON: the model's (or the host's) text, every quote and URL from the rows."""

    run_id: str
    question: str
    status: str
    stop_reason: str
    composed: bool
    answer: str
    findings: list[Finding] = Field(default_factory=list)
    limitations: str = ""
    open_questions: list[str] = Field(default_factory=list)
    evidence: list[QuotedEvidence] = Field(default_factory=list)
    saved_at: datetime
    # A completed run: true when a verifier model checked its meaning (`verification.verifier`
    # names it), false when the rules alone passed it; None for a run that did not complete.
    verified: bool | None = None
    # How its meaning was checked, and the verifier's verdict on each claim (0: the answer).
    verification: Verification = Field(default_factory=Verification)
    lanes: list[str] = Field(default_factory=list)  # the lanes it entered, in order
    escalation: str = ""  # why it left the fixed lane for the agent ("": it did not)


async def print_report(settings: Settings, run_id: str, ledger: Ledger | None = None) -> None:
    """The report Markdown as the ledger stored it (`reports.markdown`)."""
    if ledger is not None:
        markdown = await _stored_report(ledger, run_id)
    else:
        async with open_existing_ledger(settings) as opened:
            markdown = await _stored_report(opened, run_id)
    print(for_terminal(markdown))


async def _stored_report(ledger: Ledger, run_id: str) -> str:
    markdown = await ledger.report(run_id)
    if markdown is not None:
        return markdown
    if await ledger.run(run_id) is None:
        raise no_such_run(run_id)
    raise no_report_yet(run_id)


def no_report_yet(run_id: str) -> CliError:
    """A run the ledger knows that has saved no report: it is still running (or never ended)."""
    return CliError(
        f"run {run_id} has no report yet: it is saved when the run ends "
        f"(`research status {run_id}` shows how far it is)"
    )  # a report stored before text was made canonical, too


@asynccontextmanager
async def ledger_for(settings: Settings) -> AsyncIterator[Ledger]:
    """The existing ledger, read: nothing is created or migrated (`open_existing_ledger`)."""
    async with open_existing_ledger(settings) as ledger:
        yield ledger


async def load_rows(ledger: Ledger, run_id: str) -> RunRows:
    rows = await ledger.run_rows(run_id)
    if rows is None:
        raise no_such_run(run_id)
    return rows


def report_view(rows: RunRows) -> ReportView:
    """The saved report with its cited evidence in order of first citation (as the Markdown)."""
    saved = rows.report
    if saved is None:
        raise no_report_yet(rows.run.run_id)
    evidence = {item.id: item for item in rows.evidence}
    sources = {source.source_id: source for source in rows.sources}
    cited = dict.fromkeys(eid for finding in saved.report.findings for eid in finding.evidence_ids)
    quoted = []
    for evidence_id in cited:
        item = evidence.get(evidence_id)
        source = sources.get(item.source_id) if item else None
        if item is None or source is None:
            continue  # an unknown id: the Markdown says "Not recorded"; `research audit` fails it
        quoted.append(
            QuotedEvidence(
                **item.model_dump(exclude={"recorded_at"}),
                url=source.url,
                final_url=source.final_url,
                title=source.title,
                content_hash=source.content_hash or "",
            )
        )
    report = saved.report
    return ReportView(
        run_id=rows.run.run_id,
        question=rows.run.question,
        status=saved.status,
        stop_reason=saved.stop_reason,
        composed=report.composed,
        answer=report.answer,
        findings=report.findings,
        limitations=report.limitations,
        open_questions=report.open_questions,
        evidence=quoted,
        saved_at=saved.saved_at,
        verified=saved.verification.mode == "model" if saved.status == "completed" else None,
        verification=saved.verification,
        lanes=rows.run.lanes,
        escalation=rows.run.escalation,
    )


async def report(settings: Settings, args: argparse.Namespace) -> int:
    if not (args.json or args.html or args.output):
        await print_report(settings, args.id)
        return 0
    async with ledger_for(settings) as ledger:
        rows = await load_rows(ledger, args.id)
        if args.html:
            text = review_page(settings, rows)
        elif args.json:
            text = report_view(rows).model_dump_json(indent=2)
        else:
            text = await _stored_report(ledger, args.id)
    if args.output:  # the file as it is: a quote in report.md is the ledger's, byte for byte
        await asyncio.to_thread(Path(args.output).write_text, text, encoding="utf-8")
        print(f"wrote {args.output}")
    else:
        print(json_for_terminal(text) if args.json else for_terminal(text))
    return 0


async def save_review_page(settings: Settings, ledger: Ledger, run_id: str) -> Path:
    """The run's review page written to `reports/RUN.html` in the state folder; its path."""
    page = review_page(settings, await load_rows(ledger, run_id))
    path = settings.state_dir / "reports" / f"{run_id}.html"
    await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
    await asyncio.to_thread(path.write_text, page, encoding="utf-8")
    return path


def review_page(settings: Settings, rows: RunRows) -> str:
    """The run's review page (`starter.page`), linking to its Temporal Web UI page."""
    from starter.page import PageLinks, render_page  # the gate's conflict rule: only when asked

    return render_page(rows, PageLinks(web_ui=web_ui_link(settings, rows.run.run_id)))


async def runs(settings: Settings, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise CliError(f"--limit must be 1 or more, got {args.limit}", EXIT_USAGE)
    async with ledger_for(settings) as ledger:
        listed = [] if args.status == PENDING else await ledger.recent_runs(args.status, args.limit)
        waiting: list[PendingRun] = []
        if args.status in (None, PENDING, RunStatus.RUNNING):
            waiting = await pending_runs(settings, _known_to(ledger), args.limit)
    now = datetime.now(UTC)
    if args.json:
        rows = [*map(_pending_data, waiting), *(_listing_data(run, now) for run in listed)]
        print(json.dumps(rows[: args.limit], indent=2))
    elif not listed and not waiting:
        which = f" with status {args.status}" if args.status else ""
        print(f"no runs{which} in the ledger or waiting for a worker")
    else:
        print("\n".join(runs_table(listed, now, waiting)[: args.limit + 1]))
    return 0


def _known_to(ledger: Ledger) -> Callable[[str], Awaitable[bool]]:
    async def known(run_id: str) -> bool:
        return await ledger.run(run_id) is not None

    return known


def runs_table(
    listed: list[RunListing], now: datetime, waiting: Sequence[PendingRun] = ()
) -> list[str]:
    """The table of `research runs`: runs no worker has taken yet (`pending`) first."""
    header = ("RUN", "STATUS", "STOP", "STEPS", "EVIDENCE", "TOKENS", "AGE", "QUESTION")
    pending = [
        (run.run_id, PENDING, "-", "-", "-", "-", age(now, run.started_at), _cut(run.question))
        for run in waiting
    ]
    rows = [header, *pending] + [
        (
            run.run_id,
            run.status.value,
            run.stop_reason or "-",
            str(run.counters.steps),
            str(run.evidence),
            str(run.counters.tokens),
            age(now, run.started_at),
            _cut(run.question),
        )
        for run in listed
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    return ["  ".join(map(_aligned, row, widths, range(len(row)))).rstrip() for row in rows]


def _aligned(cell: str, width: int, column: int) -> str:
    return cell.rjust(width) if column in NUMBER_COLUMNS else cell.ljust(width)


def age(now: datetime, then: datetime) -> str:
    """`42s`, `5m`, `3h`, `2d`: how long ago a run started."""
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _cut(text: str, chars: int = QUESTION_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 3] + "..."


def _pending_data(run: PendingRun) -> dict[str, object]:
    """A run no worker has taken yet, in `_listing_data`'s keys: nothing counted, nothing ended."""
    return {
        "run_id": run.run_id,
        "status": PENDING,
        **dict.fromkeys(("stop_reason", "steps", "searches", "pages", "evidence", "tokens")),
        "started_at": run.started_at.isoformat(),
        "finished_at": None,
        "age_seconds": max(0, int((datetime.now(UTC) - run.started_at).total_seconds())),
        "question": run.question,
    }


def _listing_data(run: RunListing, now: datetime) -> dict[str, object]:
    return {
        "run_id": run.run_id,
        "status": run.status.value,
        "stop_reason": run.stop_reason,
        "steps": run.counters.steps,
        "searches": run.counters.searches,
        "pages": run.counters.page_fetches,
        "evidence": run.evidence,
        "tokens": run.counters.tokens,
        "started_at": run.started_at.isoformat(),
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "age_seconds": max(0, int((now - run.started_at).total_seconds())),
        "question": run.question,
    }

"""`research rerun`: run a finished run again on its recorded model decisions, and compare the two.

The new run's brief is the source's with `rerun_of` naming the source, so whichever worker takes it
answers every `decide` from the source's recorded model calls (the `replay` provider): no model is
asked, nothing is paid. Search, reading, evidence, the gate and the report run as the current code
and corpus make them. Exit 0: the runs are identical; 1: they differ; 2: nothing to rerun.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid

from activities.ledger import Ledger, RunRows
from runtime.settings import Settings
from runtime.temporal import connect
from starter.comparison import compare, render, run_view
from starter.errors import EXIT_USAGE, CliError, no_such_run
from starter.live import PlainDisplay
from starter.progress import WorkerWatch, follow
from starter.review import ledger_for
from starter.runs import start_run
from workflows.models import RUN_ID_CHARS, RunStatus

EXIT_IDENTICAL = 0
EXIT_DIFFERENT = 1


async def rerun(settings: Settings, args: argparse.Namespace) -> int:
    async with ledger_for(settings) as ledger:
        source = await _source(ledger, args.id)
        brief = source.run.brief.model_copy(update={"rerun_of": source.run.run_id})
        client = await connect(settings)
        handle = await start_run(client, settings, brief, args.rerun_id or _rerun_id(args.id))
        notes = sys.stderr if args.json else sys.stdout
        print(
            f"Rerun {handle.id} of {args.id} started on task queue {settings.task_queue}: "
            "its model decisions are the recorded ones (no model is asked)",
            file=notes,
            flush=True,
        )
        summary = await follow(
            handle,
            display=PlainDisplay(err=sys.stderr),  # no step lines: the comparison shows them
            workers=WorkerWatch(client, settings.task_queue),
        )
        rerun_rows = await ledger.run_rows(handle.id)
    if rerun_rows is None:
        raise CliError(f"the rerun {handle.id} left no rows in the ledger")
    comparison = compare(run_view(source), run_view(rerun_rows))
    if args.json:
        data = comparison.model_dump(mode="json") | {"identical": comparison.identical}
        print(json.dumps(data, indent=2))
    else:
        message = summary.data.get("message")
        if message:
            print(f"The rerun ended {summary.status}: {message}")
        print()
        print("\n".join(render(comparison)))
    return EXIT_IDENTICAL if comparison.identical else EXIT_DIFFERENT


async def _source(ledger: Ledger, run_id: str) -> RunRows:
    """The source run's rows: it must have ended and have recorded model decisions."""
    rows = await ledger.run_rows(run_id)
    if rows is None:
        raise no_such_run(run_id)
    if rows.run.status is RunStatus.RUNNING or rows.report is None:
        raise CliError(f"run {run_id} has not ended: rerun it once it has", EXIT_USAGE)
    if not rows.model_calls:
        raise CliError(
            f"run {run_id} recorded no model decisions: there is nothing to rerun", EXIT_USAGE
        )
    return rows


def _rerun_id(source: str) -> str:
    suffix = f"-rerun-{uuid.uuid4().hex[:6]}"
    return source[: RUN_ID_CHARS - len(suffix)] + suffix

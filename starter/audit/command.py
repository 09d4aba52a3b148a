"""The `research audit` command: load a run (ledger or export folder, and its history), check it,
print the table and every problem; exit 1 when any check failed."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from temporalio.client import WorkflowHistory

from activities.ledger import RunRows
from runtime.settings import Settings
from runtime.temporal import TemporalUnavailable
from starter.audit import AuditData, CheckResult, audit_table, run_checks
from starter.errors import EXIT_FAILED, EXIT_USAGE, CliError
from starter.export import is_export, load_export
from starter.history import fetch_histories, history_facts, read_history_file
from starter.review import ledger_for, load_rows
from workflows.models import RunStatus


async def audit(settings: Settings, args: argparse.Namespace) -> int:
    rows, history = await _load(settings, args)
    data = AuditData(rows, history_facts(history) if history is not None else None)
    results = run_checks(data)
    if args.json:
        print(json.dumps(_as_data(rows.run.run_id, results), indent=2))
    else:
        print(f"Audit of run {rows.run.run_id}")
        print("\n".join(audit_table(results)))
        _print_problems(results)
    return EXIT_FAILED if any(result.failed for result in results) else 0


async def _load(
    settings: Settings, args: argparse.Namespace
) -> tuple[RunRows, list[WorkflowHistory] | None]:
    """The rows and the run's histories, oldest execution first (a run that continued as new has
    several; its history checks read them as one)."""
    folder = Path(args.target)
    if await asyncio.to_thread(folder.is_dir):
        if not await asyncio.to_thread(is_export, folder):
            raise CliError(f"{folder} is not a run export (it has no run.json)", EXIT_USAGE)
        rows, history = await asyncio.to_thread(load_export, folder)
    else:
        async with ledger_for(settings) as ledger:
            rows = await load_rows(
                ledger, args.target
            )  # exit 2 when no such run (1: a check failed)
        history = None
    if rows.run.status == RunStatus.RUNNING:
        raise CliError(
            f"run {rows.run.run_id} is still running: audit it once it has ended", EXIT_USAGE
        )
    if args.history:  # each execution's file, oldest first
        files = args.history if isinstance(args.history, list) else [args.history]
        history = [await asyncio.to_thread(read_history_file, Path(file)) for file in files]
    elif history is None and not args.no_history:
        history = await _server_history(settings, rows.run.run_id)
    return rows, None if args.no_history else history


async def _server_history(settings: Settings, run_id: str) -> list[WorkflowHistory]:
    try:
        return await fetch_histories(settings, run_id)
    except TemporalUnavailable as error:
        raise CliError(
            f"{error}; or audit without it: --history FILE or --no-history", EXIT_USAGE
        ) from None


def _print_problems(results: list[CheckResult]) -> None:
    failed = [result for result in results if result.failed]
    if not failed:
        return
    print("\nProblems:")
    for result in failed:
        for problem in result.problems:
            print(f"  {result.check.name}: {problem}")


def _as_data(run_id: str, results: list[CheckResult]) -> dict[str, object]:
    return {
        "run_id": run_id,
        "passed": not any(result.failed for result in results),
        "checks": [
            {
                "name": result.check.name,
                "guards": result.check.guards,
                "result": result.word.lower(),
                "problems": result.problems,
            }
            for result in results
        ],
    }

"""Record the run exports the audit tests tamper with: `python -m tests.exports.record`.

Runs the sample brief with the offline policy on the same embedded stack as `research demo` (its
own temporary state folder and ports), once to completion and once stopped by the step limit,
and writes each run as `research export` does (ledger rows, report, snapshots, history) into a
folder beside this file. Re-record when the export format or the ledger's rows change.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

from starter.export import write_export
from tests.histories.record import sample_run

HERE = Path(__file__).parent
RUNS: dict[str, dict[str, int]] = {"demo": {}, "step-limit": {"max_steps": 4}}  # limits changed


async def record(name: str) -> None:
    target = HERE / name
    async with sample_run(f"research-{name}-recorded", RUNS[name]) as (stack, result, history):
        rows = await stack.ledger.run_rows(result.run_id)
    assert rows is not None
    shutil.rmtree(target, ignore_errors=True)
    write_export(rows, history, target)
    print(f"{result.status} / {result.stop_reason} -> {target}")


if __name__ == "__main__":
    for name in sys.argv[1:] or list(RUNS):
        asyncio.run(record(name))

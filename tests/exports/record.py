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
import tempfile
from dataclasses import replace
from pathlib import Path

from runtime.devstack import embedded_stack
from runtime.settings import Settings
from starter.briefs import load_brief
from starter.export import write_export
from starter.local import DEMO_BRIEF, background_worker
from tests.conftest import free_port
from workflows.models import Brief
from workflows.research import ResearchWorkflow

HERE = Path(__file__).parent
RUNS: dict[str, dict[str, int]] = {"demo": {}, "step-limit": {"max_steps": 4}}  # limits changed


async def record(name: str) -> None:
    target = HERE / name
    with tempfile.TemporaryDirectory(prefix="export-") as state:
        settings = replace(
            Settings.from_env({}),
            state_dir=Path(state),
            temporal_address=f"127.0.0.1:{free_port()}",
            ui_port=free_port(),
        )
        async with embedded_stack(settings) as stack, background_worker(stack):
            handle = await stack.client.start_workflow(
                ResearchWorkflow.run,
                _brief(RUNS[name]),
                id=f"research-{name}-recorded",
                task_queue=stack.settings.task_queue,
            )
            result = await handle.result()
            history = await handle.fetch_history()
            rows = await stack.ledger.run_rows(handle.id)
    assert rows is not None
    shutil.rmtree(target, ignore_errors=True)
    write_export(rows, history, target)
    print(f"{result.status} / {result.stop_reason} -> {target}")


def _brief(limits: dict[str, int]) -> Brief:
    brief = load_brief(DEMO_BRIEF)
    return brief.model_copy(update={"limits": brief.limits.model_copy(update=limits)})


if __name__ == "__main__":
    for name in sys.argv[1:] or list(RUNS):
        asyncio.run(record(name))

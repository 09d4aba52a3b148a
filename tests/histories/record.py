"""Record histories for the replay test: `python -m tests.histories.record [SCENARIO ...]`.

Runs the sample brief with the offline policy on the same embedded stack as `research demo`
(its own temporary state folder and ports), then writes the workflow history as JSON beside this
file. Re-record only on purpose: a history that no longer replays means running workflows would
break.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

from temporalio.client import WorkflowHistory

from runtime.devstack import EmbeddedStack, embedded_stack
from runtime.settings import Settings
from starter.briefs import load_brief
from starter.local import DEMO_BRIEF, background_worker
from tests.conftest import free_port
from workflows.models import Brief, RunResult
from workflows.research import ResearchWorkflow

HERE = Path(__file__).parent

# Scenario name -> limits overriding the sample brief's (a completed run, and one stopped early).
# The *-offline histories were recorded before the lean loop (patch "lean-loop-1") and replay its
# old branch; the *-lean ones with it, before "transcript-in-ledger-1"; the *-ledger ones with
# both, before "local-policy-1"; the *-local ones with all three, before "retry-by-cause-1"; the
# *-cause ones with all four, before "seed-checks-1"; the *-seeds ones with all five.
# ("local-failures-1" marks only a run whose local activity failed for good: a workflow test.)
SCENARIOS: dict[str, dict[str, int]] = {
    "demo-offline": {},
    "step-limit-offline": {"max_steps": 4},
    "demo-lean": {},
    "step-limit-lean": {"max_steps": 4},
    "demo-ledger": {},
    "step-limit-ledger": {"max_steps": 4},
    "demo-local": {},
    "step-limit-local": {"max_steps": 4},
    "demo-cause": {},
    "step-limit-cause": {"max_steps": 4},
    "demo-seeds": {},
    "step-limit-seeds": {"max_steps": 4},
}


async def record(name: str) -> None:
    target = HERE / f"{name}.json"
    async with sample_run(f"{name}-recorded", SCENARIOS[name]) as (_, result, history):
        pass
    target.write_text(history.to_json())
    print(f"{result.status} / {result.stop_reason}: {len(history.events)} events -> {target}")


@asynccontextmanager
async def sample_run(
    run_id: str, limits: dict[str, int]
) -> AsyncIterator[tuple[EmbeddedStack, RunResult, WorkflowHistory]]:
    """The sample brief with `limits`, run by the offline policy on an embedded stack of its own
    (temporary state folder and ports); the stack stays up inside the block (its ledger too)."""
    with tempfile.TemporaryDirectory(prefix="recorded-") as state:
        settings = replace(
            Settings.from_env({}),
            state_dir=Path(state),
            temporal_address=f"127.0.0.1:{free_port()}",
            ui_port=free_port(),
        )
        async with embedded_stack(settings) as stack, background_worker(stack):
            handle = await stack.client.start_workflow(
                ResearchWorkflow.run,
                _brief(limits),
                id=run_id,
                task_queue=stack.settings.task_queue,
            )
            result: RunResult = await handle.result()
            yield stack, result, await handle.fetch_history()


def _brief(limits: dict[str, int]) -> Brief:
    brief = load_brief(DEMO_BRIEF)
    return brief.model_copy(update={"limits": brief.limits.model_copy(update=limits)})


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        asyncio.run(record(name))

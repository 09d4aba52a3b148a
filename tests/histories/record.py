"""Record histories for the replay test: `python -m tests.histories.record [SCENARIO ...]`.

Runs the sample brief on the same embedded stack as `research demo` (its own temporary state
folder and ports), then writes the workflow history as JSON beside this file. Two provider shapes:
the offline policy (`decide` a local activity, as `research demo`) and an OpenAI-compatible model
(a scripted local server: `decide` a regular activity with heartbeats, the real model's path).
A run that continues as new (`CONTINUE_EVERY`) writes each execution: `NAME.json` the first,
`NAME.2.json`, `NAME.3.json`, ... the ones it continued as. Re-record only on purpose: a history
that no longer replays means running workflows would break.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Literal

from temporalio.client import WorkflowHistory

from bench.lean import twelve_steps
from runtime.settings import Settings
from starter.briefs import load_brief
from starter.devstack import EmbeddedStack, embedded_stack
from starter.history import history_chain
from starter.local import DEMO_BRIEF, background_worker
from tests.conftest import free_port
from tests.fakes.openai_server import (
    FakeOpenAI,
    Message,
    Reply,
    Script,
    composing,
    harborq_compose,
    harborq_finish,
    serve,
    tool,
)
from workflows.models import Brief, RunResult
from workflows.research import ResearchWorkflow

HERE = Path(__file__).parent

Shape = Literal["offline", "openai"]
# Scenario name -> its provider shape and the limits overriding the sample brief's (a completed
# run, and one stopped early). Recorded once each with the one code path (no patch markers).
SCENARIOS: dict[str, tuple[Shape, dict[str, int]]] = {
    "demo-offline": ("offline", {}),
    "step-limit-offline": ("offline", {"max_steps": 4}),
    "demo-openai": ("openai", {}),
    "step-limit-openai": ("openai", {"max_steps": 4}),
    "continued-openai": ("openai", {}),
    "fixed-lane-openai": ("openai", {}),
    "escalated-openai": ("openai", {}),
}
# Scenarios in the `auto` lane (the others are agent runs): the fixed lane completing, and its
# report refused (a finding citing a passage of no page read), escalated to the agent.
LANE_SCENARIOS: dict[str, bool] = {"fixed-lane-openai": False, "escalated-openai": True}
# Scenarios whose worker continues runs as new every this many steps (RESEARCH_CONTINUE_AS_NEW_
# STEPS): the scripted 12 steps in three executions.
CONTINUE_EVERY: dict[str, int] = {"continued-openai": 5}


def execution_file(name: str, number: int) -> Path:
    """Where execution `number` (1: the first) of scenario `name` is recorded."""
    return HERE / (f"{name}.json" if number == 1 else f"{name}.{number}.json")


async def record(name: str) -> None:
    shape, limits = SCENARIOS[name]
    every = CONTINUE_EVERY.get(name, 0)
    lane = LANE_SCENARIOS.get(name)
    async with sample_run(f"{name}-recorded", limits, shape, every, lane) as (stack, result, _):
        histories = await history_chain(stack.client, f"{name}-recorded")
    for stale in HERE.glob(f"{name}.*.json"):
        stale.unlink()
    for number, history in enumerate(histories, start=1):
        target = execution_file(name, number)
        target.write_text(history.to_json())
        print(f"{result.status} / {result.stop_reason}: {len(history.events)} events -> {target}")


@asynccontextmanager
async def sample_run(
    run_id: str,
    limits: dict[str, int],
    shape: Shape = "offline",
    continue_every: int = 0,
    escalates: bool | None = None,
) -> AsyncIterator[tuple[EmbeddedStack, RunResult, WorkflowHistory]]:
    """The sample brief with `limits`, decided by `shape` on an embedded stack of its own
    (temporary state folder and ports); the stack stays up inside the block (its ledger too).
    `continue_every`: the worker continues runs as new every this many steps (0: its default).
    `escalates` (not None): the `auto` lane, its composed report refused when True."""
    with tempfile.TemporaryDirectory(prefix="recorded-") as state, ExitStack() as model:
        settings = replace(
            Settings.from_env({}),
            state_dir=Path(state),
            temporal_address=f"127.0.0.1:{free_port()}",
            ui_port=free_port(),
        )
        if shape == "openai":
            script = twelve_steps if escalates is None else _lanes_script(escalates)
            url = model.enter_context(serve(FakeOpenAI(script)))  # and the verifier
            settings = Settings.from_env(
                {
                    "OPENAI_BASE_URL": url,
                    "OPENAI_API_KEY": "sk-record-0123456789",
                    "RESEARCH_LANE": "agent" if escalates is None else "auto",
                }
            )
            settings = replace(
                settings,
                state_dir=Path(state),
                temporal_address=f"127.0.0.1:{free_port()}",
                ui_port=free_port(),
            )
        if continue_every:
            settings = replace(settings, continue_after_steps=continue_every)
        async with embedded_stack(settings) as stack, background_worker(stack):
            handle = await stack.client.start_workflow(
                ResearchWorkflow.run,
                _brief(limits),
                id=run_id,
                task_queue=stack.settings.task_queue,
            )
            result: RunResult = await handle.result()
            yield stack, result, await handle.fetch_history()


def _lanes_script(stray: bool) -> Script:
    """The composing call from the passages read (`stray`: with a finding citing a page never
    read, so the report is refused); the agent reads a stored page, then submits."""

    def script(turn: int, messages: list[Message]) -> Reply:
        if composing(messages):
            return harborq_compose(messages, stray=stray)
        last = next(m for m in reversed(messages) if m.get("role") == "assistant")
        called = (last.get("tool_calls") or [{}])[0].get("function", {}).get("name")
        if called == "finish_research":
            return tool("read_page", source_id="S1")
        return harborq_finish()

    return script


def _brief(limits: dict[str, int]) -> Brief:
    brief = load_brief(DEMO_BRIEF)
    return brief.model_copy(update={"limits": brief.limits.model_copy(update=limits)})


if __name__ == "__main__":
    for name in sys.argv[1:] or list(SCENARIOS):
        asyncio.run(record(name))

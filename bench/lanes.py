"""The fixed lane beside the agent on the sample brief, with a scripted model.

    .venv/bin/python -m bench.lanes [RUNS]   (make bench)

Starts the same stack as `research demo` (its own state folder and ports) with the model provider
`openai` pointed at the local OpenAI-compatible server (tests/fakes/openai_server.py): the
composing call answered from the passages the fixed lane read, the agent's turns by the competent
HarborQ script, the verifier finding every claim supported. The sample brief runs RUNS times
(default 3) in the `auto` lane and as many in the `agent` lane. Printed and written, dated, to
bench/results/lanes.json: completions, the lanes entered, model calls (the verifier's apart),
provider-reported tokens (the verifier's included, as the run's budget counts them), steps, page
fetches and seconds per run. The goals (issue 49): `auto` completes in the fixed lane with at
most 2 model calls besides the verifier's, and fewer tokens than `agent`. Figures only.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from runtime.settings import Settings
from starter.briefs import load_brief
from starter.devstack import embedded_stack
from starter.figures import AtMost, Measurement, Row, print_table
from starter.local import DEMO_BRIEF, background_worker
from starter.runs import new_run_id, start_run
from tests.fakes.openai_server import (
    FakeOpenAI,
    Message,
    Reply,
    composing,
    harborq_compose,
    harborq_script,
    serve,
)
from workflows.models import RunResult

KEY = "sk-bench-not-a-real-key"
LANES = ("auto", "agent")


def scripted(turn: int, messages: list[Message]) -> Reply:
    """The composing call from the passages read; the agent's turns as the HarborQ script."""
    return harborq_compose(messages) if composing(messages) else harborq_script(turn, messages)


async def bench(runs: int) -> Path:
    measurement = Measurement.begin("lanes", f"python -m bench.lanes {runs}")
    fake = FakeOpenAI(scripted)
    results: dict[str, list[tuple[RunResult, float, int]]] = {lane: [] for lane in LANES}
    with tempfile.TemporaryDirectory(prefix="bench-lanes-") as state, serve(fake) as url:
        settings = replace(
            Settings.from_env({"OPENAI_BASE_URL": url, "OPENAI_API_KEY": KEY}),
            state_dir=Path(state),
            temporal_address="127.0.0.1:27989",
            ui_port=28989,
        )
        brief = load_brief(DEMO_BRIEF)
        async with embedded_stack(settings) as stack, background_worker(stack):
            for lane in LANES:
                for _ in range(runs):
                    asked = len(fake.verifier_requests)
                    started = time.perf_counter()
                    handle = await start_run(
                        stack.client, stack.settings, brief.model_copy(update={"lane": lane}),
                        new_run_id(brief.question),
                    )  # fmt: skip
                    result: RunResult = await handle.result()
                    took = time.perf_counter() - started
                    results[lane].append((result, took, len(fake.verifier_requests) - asked))
    figures = {lane: _figures(ran) for lane, ran in results.items()}
    print_table(_rows(figures), measurement)
    path = measurement.write(figures)
    print(f"wrote {path}")
    return path


def _figures(ran: list[tuple[RunResult, float, int]]) -> dict[str, Any]:
    results = [result for result, _, _ in ran]
    return {
        "runs": len(results),
        "completed": sum(result.status == "completed" for result in results),
        "lanes": sorted({" -> ".join(result.lanes) for result in results}),
        "model_calls": [result.counters.model_calls for result in results],
        "verifier_calls": [asked for _, _, asked in ran],
        "tokens": [result.counters.tokens for result in results],
        "steps": [result.counters.steps for result in results],
        "page_fetches": [result.counters.page_fetches for result in results],
        "searches": [result.counters.searches for result in results],
        "seconds": [round(took, 2) for _, took, _ in ran],
    }


def _rows(figures: dict[str, dict[str, Any]]) -> list[Row]:
    auto, agent = figures["auto"], figures["agent"]
    auto_tokens, agent_tokens = (
        statistics.median(auto["tokens"]),
        statistics.median(agent["tokens"]),
    )
    fixed_only = auto["lanes"] == ["fixed"] and auto["completed"] == auto["runs"]
    rows = [
        Row(
            "auto: completed, lanes entered",
            f"{auto['completed']}/{auto['runs']}, {', '.join(auto['lanes'])}",
            f"agent: {agent['completed']}/{agent['runs']}, {', '.join(agent['lanes'])}",
            goal="all in the fixed lane",
            met=fixed_only,
        ),
        Row(
            "auto: model calls per run (verifier's apart)",
            f"{max(auto['model_calls'])}",
            f"agent: {max(agent['model_calls'])}; verifier calls auto "
            f"{max(auto['verifier_calls'])}, agent {max(agent['verifier_calls'])}",
            goal=AtMost(2),
            value=max(auto["model_calls"]),
        ),
        Row(
            "auto: tokens per run (median, verifier's included)",
            f"{auto_tokens:,.0f}",
            f"agent: {agent_tokens:,.0f}",
            goal="fewer than agent",
            met=auto_tokens < agent_tokens,
        ),
    ]
    for name in ("steps", "page_fetches", "searches", "seconds"):
        rows.append(
            Row(
                f"auto: {name.replace('_', ' ')} per run (median)",
                f"{statistics.median(auto[name]):g}",
                f"agent: {statistics.median(agent[name]):g}",
            )
        )
    return rows


if __name__ == "__main__":
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 3))

"""Throughput and latency of whole offline investigations on the embedded stack.

    .venv/bin/python -m bench.offline_runs [RUNS]

Starts the same stack as `research demo` (its own state folder and ports), runs the sample brief
RUNS times one after another (default 10), and prints wall time per run, per step and per model
turn. Figures only: nothing here asserts a speed. They are also written, dated, with the
machine's cores and load, to bench/results/offline_runs.json (starter.figures).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from runtime.settings import Settings
from starter.briefs import load_brief
from starter.devstack import embedded_stack
from starter.figures import Measurement
from starter.local import DEMO_BRIEF, background_worker
from starter.runs import new_run_id, start_run
from workflows.models import RunResult


async def bench(runs: int) -> None:
    measurement = Measurement.begin("offline_runs", f"python -m bench.offline_runs {runs}")
    with tempfile.TemporaryDirectory(prefix="bench-") as state:
        settings = replace(
            Settings.from_env(),
            state_dir=Path(state),
            temporal_address="127.0.0.1:27999",
            ui_port=28999,
        )
        brief = load_brief(DEMO_BRIEF)
        async with embedded_stack(settings) as stack, background_worker(stack):
            seconds, results = [], []
            for _ in range(runs):
                started = time.perf_counter()
                handle = await start_run(stack.client, stack.settings, brief, new_run_id())
                result: RunResult = await handle.result()
                seconds.append(time.perf_counter() - started)
                results.append(result)
    print(f"wrote {measurement.write(_report(seconds, results))}")


def _report(seconds: list[float], results: list[RunResult]) -> dict[str, object]:
    steps = sum(result.counters.steps for result in results)
    turns = sum(result.counters.model_calls for result in results)
    completed = sum(result.status == "completed" for result in results)
    print(f"runs: {len(results)} ({completed} completed), steps: {steps}, model turns: {turns}")
    print(f"per run:  median {statistics.median(seconds):.3f} s, max {max(seconds):.3f} s")
    print(f"per step: {sum(seconds) / steps * 1000:.1f} ms (mean, all activities included)")
    print(f"per turn: {sum(seconds) / turns * 1000:.1f} ms (mean)")
    return {
        "runs": len(results),
        "completed": completed,
        "steps": steps,
        "model_turns": turns,
        "per_run_median_s": round(statistics.median(seconds), 3),
        "per_run_max_s": round(max(seconds), 3),
        "per_step_ms": round(sum(seconds) / steps * 1000, 1),
        "per_turn_ms": round(sum(seconds) / turns * 1000, 1),
    }


if __name__ == "__main__":
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 10))

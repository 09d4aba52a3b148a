"""Temporal's own cost of a step on this machine: the floor under issue 26's CPU goals.

    .venv/bin/python -m bench.temporal_floor [CONCURRENT]      (make bench)

A step of an investigation with a real model is, at the least, what Temporal does for one
regular activity (the model's call) and one local activity (the tool) in one workflow task. This
bench runs that and nothing else (`bench.floor_workflow`: activities that do nothing, payloads of
a few bytes) on the same embedded stack as `bench.lean` (the dev server with `make bench`'s
options), in one worker process of its own with worker.py's slots and pollers and the SDK's
defaults otherwise (the sandbox included):
STEPS steps a run, the model answering after MODEL_SECONDS, CONCURRENT runs (default 100) at
once against one. Printed and written, dated, with the machine's cores and load, to
bench/results/temporal_floor.json: the ratio of the makespans, and the CPU per step of the dev
server, PostgreSQL (started, written to by nobody), the worker process and this process (the
client). What an investigation's step costs above these figures is ours; below them, nothing our
code does can go. Figures only.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from bench import cpu
from bench.floor_workflow import FloorSteps, model_call, tool_call
from runtime.settings import PROJECT_ROOT, Settings
from starter.devstack import embedded_stack
from starter.figures import AtMost, Measurement, Row, print_table
from worker import ACTIVITY_SLOTS, POLLERS, WORKFLOW_TASK_SLOTS

STEPS = 12  # as bench.lean's scripted run
MODEL_SECONDS = 1.0  # as bench.lean's concurrent runs
TASK_QUEUE = "bench-floor"
READY = "floor worker ready"
# issue 26's goals, for the whole system: here for Temporal alone
ALL_PROCESSES_MS = 20.0
RATIO = 1.5


async def bench(concurrent: int) -> None:
    measurement = Measurement.begin(
        "temporal_floor", f"python -m bench.temporal_floor {concurrent}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as scratch:
        settings = replace(
            Settings.from_env(),
            state_dir=Path(scratch),
            temporal_address="127.0.0.1:27997",
            ui_port=28997,
        )
        async with embedded_stack(settings) as stack, _worker(stack.temporal_address) as pid:
            await _makespan(stack.client, 1)  # warm: the worker's first run
            one, _ = await _makespan(stack.client, 1)
            before = cpu.snapshot(settings.state_dir, [pid])
            many, steps = await _makespan(stack.client, concurrent)
            used = cpu.used(before, cpu.snapshot(settings.state_dir, [pid]))
    rows = [
        Row(
            f"{concurrent} runs at once vs one, Temporal alone ({MODEL_SECONDS:g} s model)",
            f"{many / one:.2f}x",
            f"{many:.1f} s vs {one:.1f} s",
            goal=AtMost(RATIO),
            value=many / one,
        ),
        *(
            Row(f"  CPU per step: {group}", f"{seconds * 1000 / steps:.1f} ms", f"{seconds:.1f} s")
            for group, seconds in used.items()
        ),
    ]
    total, cores = sum(used.values()), cpu.cores()
    rows.append(
        Row(
            f"  CPU per step, all of these ({steps} steps)",
            f"{total * 1000 / steps:.1f} ms",
            f"floor {total / cores:.1f} s on {cores} cores (CPU / cores) vs {many:.1f} s",
            goal=AtMost(ALL_PROCESSES_MS, " ms"),
            value=total * 1000 / steps,
        )
    )
    print_table(rows, measurement)
    written = measurement.write(
        {
            "concurrent_runs": concurrent,
            "steps_per_run": STEPS,
            "rows": [row.as_dict() for row in rows],
        }
    )
    print(f"\nwrote {written}")


@asynccontextmanager
async def _worker(address: str) -> AsyncIterator[int]:
    """The floor's worker in a process of its own (its pid), so its CPU is no one else's."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.temporal_floor",
        "--worker",
        address,
        cwd=PROJECT_ROOT,
        env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)},
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        line = await process.stdout.readline()
        if READY not in line.decode():
            raise RuntimeError("the floor's worker did not start")
        yield process.pid
    finally:
        process.terminate()
        await process.wait()


async def _serve(address: str) -> None:
    client = await Client.connect(address)
    worker = Worker(
        client,
        task_queue=TASK_QUEUE,
        workflows=[FloorSteps],
        activities=[model_call, tool_call],
        # as worker.py's: the slots and pollers that feed the runs
        max_concurrent_activities=ACTIVITY_SLOTS,
        max_concurrent_local_activities=ACTIVITY_SLOTS,
        max_concurrent_workflow_tasks=WORKFLOW_TASK_SLOTS,
        max_concurrent_activity_task_polls=POLLERS,
        max_concurrent_workflow_task_polls=POLLERS,
    )
    async with worker:
        print(READY, flush=True)
        await asyncio.Event().wait()


async def _makespan(client: Client, count: int) -> tuple[float, int]:
    """Seconds until `count` runs started at once have all ended, and their steps."""
    started = time.perf_counter()
    handles = [
        await client.start_workflow(
            FloorSteps.run,
            args=[STEPS, MODEL_SECONDS],
            id=f"floor-{time.time_ns()}-{n}",
            task_queue=TASK_QUEUE,
        )
        for n in range(count)
    ]
    steps = sum(await asyncio.gather(*(handle.result() for handle in handles)))
    return time.perf_counter() - started, steps


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(_serve(sys.argv[2]))
        return
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 100))


if __name__ == "__main__":
    main()

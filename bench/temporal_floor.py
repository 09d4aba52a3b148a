"""Temporal's own cost of a step on this machine: the floor under issue 26's CPU goals.

    .venv/bin/python -m bench.temporal_floor [CONCURRENT]      (make bench)

A step of an investigation with a real model is, at the least, what Temporal does for one
regular activity (the model's call) and one local activity (the tool) in one workflow task. This
bench runs that and nothing else (`bench.floor_workflow`: activities that do nothing, payloads of
a few bytes) on the same embedded stack as `bench.lean` (the dev server with `make bench`'s
options), in one worker process of its own with worker.py's slots and pollers and the SDK's
defaults otherwise (the sandbox included): STEPS steps a run, the model answering after
MODEL_SECONDS, CONCURRENT runs (default 100) at once against one run, REPEATS times (the
figures move by a fifth from one to the next on these machines). Printed and written, dated,
with the machine's cores and load, to bench/results/temporal_floor.json: each repeat's makespan
ratio and CPU per step of the dev server, PostgreSQL (started, written to by nobody), the worker
process and this process (the client), and the median of each beside issue 26's goals. What an
investigation's step costs above these figures is ours; below them, nothing our code does can
go. Figures only.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

from temporalio.client import Client

from bench import cpu
from bench.floor_workflow import READY, TASK_QUEUE, FloorSteps
from runtime.settings import PROJECT_ROOT, Settings
from starter.devstack import embedded_stack
from starter.figures import AtMost, Measurement, Row, print_table

STEPS = 12  # as bench.lean's scripted run
MODEL_SECONDS = 1.0  # as bench.lean's concurrent runs
REPEATS = 3
START_SECONDS = 60.0  # for the floor's worker to say it is ready
# issue 26's goals, for the whole system: here for Temporal alone
ALL_PROCESSES_MS = 20.0
RATIO = 1.5


class FloorError(RuntimeError):
    """The floor could not be measured as it should be; the message says why."""


async def bench(concurrent: int) -> None:
    command = f"python -m bench.temporal_floor {concurrent}"
    measurement = Measurement.begin("temporal_floor", command)
    repeats: list[tuple[float, dict[str, float]]] = []  # (ratio, CPU ms a step by group)
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as scratch:
        settings = replace(
            Settings.from_env(),
            state_dir=Path(scratch),
            temporal_address="127.0.0.1:27997",
            ui_port=28997,
        )
        async with embedded_stack(settings) as stack:
            if stack.dev_server_reused:
                raise FloorError(
                    f"a Temporal server already answers on {settings.temporal_address}: "
                    "stop it, so the floor measures a dev server of its own"
                )
            async with _worker(stack.temporal_address) as pid:
                await _makespan(stack.client, 1)  # warm: the worker's first run
                for number in range(1, REPEATS + 1):
                    one, _ = await _makespan(stack.client, 1)
                    before = cpu.snapshot(settings.state_dir, [pid])
                    many, steps = await _makespan(stack.client, concurrent)
                    used = cpu.used(before, cpu.snapshot(settings.state_dir, [pid]))
                    if cpu.SERVER not in used:
                        raise FloorError("the dev server's process was not found under /proc")
                    per_step = {group: s * 1000 / steps for group, s in used.items()}
                    repeats.append((many / one, per_step))
                    print(f"repeat {number}: {many:.1f} s vs {one:.1f} s, {_cpu(per_step)}")
    rows = _rows(repeats, concurrent)
    print_table(rows, measurement)
    written = measurement.write(
        {
            "concurrent_runs": concurrent,
            "steps_per_run": STEPS,
            "repeats": [
                {
                    "ratio": round(ratio, 2),
                    "cpu_ms_per_step": {g: round(v, 1) for g, v in cpu_.items()},
                }
                for ratio, cpu_ in repeats
            ],
            "rows": [row.as_dict() for row in rows],
        }
    )
    print(f"\nwrote {written}")


def _rows(repeats: list[tuple[float, dict[str, float]]], concurrent: int) -> list[Row]:
    """The median of each figure over the repeats, its range beside it."""
    ratios = [ratio for ratio, _ in repeats]
    rows = [
        Row(
            f"{concurrent} runs at once vs one, Temporal alone ({MODEL_SECONDS:g} s model)",
            f"{statistics.median(ratios):.2f}x",
            f"median of {len(ratios)}, {min(ratios):.2f}-{max(ratios):.2f}x",
            goal=AtMost(RATIO),
            value=statistics.median(ratios),
        )
    ]
    groups = list(repeats[0][1])
    for group in groups:
        values = [per_step.get(group, 0.0) for _, per_step in repeats]
        rows.append(
            Row(f"  CPU per step: {group}", f"{statistics.median(values):.1f} ms", _range(values))
        )
    totals = [sum(per_step.values()) for _, per_step in repeats]
    rows.append(
        Row(
            f"  CPU per step, all of these ({STEPS} steps a run)",
            f"{statistics.median(totals):.1f} ms",
            _range(totals),
            goal=AtMost(ALL_PROCESSES_MS, "ms"),
            value=statistics.median(totals),
        )
    )
    return rows


def _range(values: list[float]) -> str:
    return f"median of {len(values)}, {min(values):.1f}-{max(values):.1f} ms"


def _cpu(per_step: dict[str, float]) -> str:
    return ", ".join(f"{group} {ms:.1f} ms" for group, ms in per_step.items())


@asynccontextmanager
async def _worker(address: str) -> AsyncIterator[int]:
    """The floor's worker in a process of its own (its pid), so its CPU is no one else's."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.floor_workflow",
        address,
        cwd=PROJECT_ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    drain: asyncio.Task[None] | None = None
    try:
        assert process.stdout is not None
        try:
            await asyncio.wait_for(_ready(process.stdout), START_SECONDS)
        except TimeoutError:
            raise FloorError(
                f"the floor's worker was not ready within {START_SECONDS:g} s"
            ) from None
        except EOFError:
            code = await process.wait()
            raise FloorError(f"the floor's worker exited with {code} before it was ready") from None
        drain = asyncio.create_task(_drain(process.stdout))  # a full pipe would stall it
        yield process.pid
    finally:
        if process.returncode is None:
            process.terminate()
        await process.wait()
        if drain is not None:
            await drain


async def _ready(stdout: asyncio.StreamReader) -> None:
    """Read the worker's output until it says it is ready (EOFError: it ended first)."""
    while READY not in (line := await stdout.readline()).decode():
        if not line:
            raise EOFError


async def _drain(stdout: asyncio.StreamReader) -> None:
    while await stdout.readline():
        pass


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
    asyncio.run(bench(int(sys.argv[1]) if len(sys.argv) > 1 else 100))


if __name__ == "__main__":
    main()

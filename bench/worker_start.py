"""Worker starts, N times: how each ended (exit code, last line). Two shapes:

    .venv/bin/python -m bench.worker_start [--starts 20] [--wait 1] [--parallel 2]
    .venv/bin/python -m bench.worker_start --together 3 [--starts 20]

Stopped (the default): each start is `python worker.py` with TEMPORAL_ADDRESS on a port nothing
listens on and RESEARCH_STARTUP_WAIT_SECONDS=--wait. Every start should exit 1 with the same one
sentence; an exit of -6 (SIGABRT, `PyGILState_Release` at interpreter exit) is what
`worker.exit_now` prevents.

Together: each of --starts rounds starts a fresh Temporal dev server (a new database: the worker
deployment does not exist yet) and --together `python worker.py` at the same moment, all of which
should print `worker ready` (workers registering one deployment at once used to meet "too many
requests issued to Worker Deployment" and exit). Prints a table and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from runtime.database import apply_migrations
from runtime.settings import PROJECT_ROOT, Settings
from runtime.temporal import start_dev_server
from starter.devstack import open_database
from tests.conftest import free_port

KEEP = {"PATH", "HOME", "LANG", "TMPDIR"}
READY = "worker ready"
READY_SECONDS = 180.0  # a start that prints nothing by then counts as hung


def start(address: str, wait: float) -> tuple[int, str, float]:
    env = {name: value for name, value in os.environ.items() if name in KEEP}
    env |= {"TEMPORAL_ADDRESS": address, "RESEARCH_STARTUP_WAIT_SECONDS": str(wait)}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "worker.py")],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    last = (done.stderr.strip().splitlines() or ["(nothing)"])[-1]
    return done.returncode, last, time.monotonic() - began


def stopped(args: argparse.Namespace) -> None:
    address = f"127.0.0.1:{free_port()}"
    with ThreadPoolExecutor(args.parallel) as pool:
        ends = list(pool.map(lambda _: start(address, args.wait), range(args.starts)))
    print(f"{args.starts} worker starts, Temporal stopped at {address}, wait {args.wait:g} s")
    print(f"{'count':>5}  {'exit':>4}  last line")
    for (code, last), count in Counter((code, last) for code, last, _ in ends).most_common():
        print(f"{count:>5}  {code:>4}  {last[:150]}")
    seconds = sorted(took for _, _, took in ends)
    print(f"seconds per start: median {seconds[len(seconds) // 2]:.1f}, max {seconds[-1]:.1f}")


def until_ready(process: subprocess.Popen[str]) -> tuple[bool, list[str], float]:
    """Whether `process` printed READY (else it exited or hung), its lines so far, and when."""
    began = time.monotonic()
    lines: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:  # the read ends when the worker exits
        lines.append(line.rstrip())
        if READY in line:
            return True, lines, time.monotonic() - began
        if time.monotonic() - began > READY_SECONDS:
            break
    return False, lines, time.monotonic() - began


async def together(args: argparse.Namespace) -> None:
    ends: list[tuple[bool, list[str], float]] = []
    with tempfile.TemporaryDirectory(prefix="worker-start-") as scratch:
        base = Settings(state_dir=Path(scratch))
        async with open_database(base) as database_url:
            await asyncio.to_thread(apply_migrations, database_url)
            for round_ in range(args.starts):
                ends += await _round(base, database_url, Path(scratch) / f"round-{round_}", args)
                print(f"round {round_ + 1}: {sum(ready for ready, _, _ in ends)} of {len(ends)} up")
    up = [took for ready, _, took in ends if ready]
    waits = Counter(
        line.split("waiting for ", 1)[1].split(";")[0]
        for _, lines, _ in ends
        for line in lines
        if "waiting for " in line
    )
    print(f"\n{args.starts} rounds of {args.together} workers started together on a fresh server")
    print(f"workers up: {len(up)} of {len(ends)}")
    for ready, lines, _ in ends:
        if not ready:
            print(f"  not up: {(lines or ['(nothing)'])[-1][:200]}")
    print(f"waits at start-up (logged back-off): {sum(waits.values())}")
    for what, count in waits.most_common():
        print(f"  {count:>4}  {what[:150]}")
    if up:
        up.sort()
        print(f"seconds to ready: median {up[len(up) // 2]:.1f}, max {up[-1]:.1f}")


async def _round(
    base: Settings, database_url: str, state: Path, args: argparse.Namespace
) -> list[tuple[bool, list[str], float]]:
    settings = Settings(
        state_dir=state, temporal_address=f"127.0.0.1:{free_port()}", ui_port=free_port()
    )
    server = await start_dev_server(settings)
    env = {name: value for name, value in os.environ.items() if name in KEEP}
    env |= {
        "TEMPORAL_ADDRESS": server.address,
        "DATABASE_URL": database_url,
        "RESEARCH_STATE_DIR": str(base.state_dir),
        "PYTHONPATH": str(PROJECT_ROOT),
        "PYTHONUNBUFFERED": "1",
    }
    workers = [_spawn(env) for _ in range(args.together)]
    try:
        return list(await asyncio.gather(*(asyncio.to_thread(until_ready, w) for w in workers)))
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
        server.stop()


def _spawn(env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(PROJECT_ROOT / "worker.py")],
        cwd=PROJECT_ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20, help="starts, or rounds with --together")
    parser.add_argument("--wait", type=float, default=1.0)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--together", type=int, default=0, help="workers per fresh server")
    args = parser.parse_args()
    if args.together:
        asyncio.run(together(args))
    else:
        stopped(args)


if __name__ == "__main__":
    main()

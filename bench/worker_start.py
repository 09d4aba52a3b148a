"""A worker started while Temporal is stopped, N times: how each start ended (exit code, last line).

    .venv/bin/python -m bench.worker_start [--starts 20] [--wait 1] [--parallel 2]

Each start is `python worker.py` with TEMPORAL_ADDRESS on a port nothing listens on and
RESEARCH_STARTUP_WAIT_SECONDS=--wait. Every start should exit 1 with the same one sentence; an
exit of -6 (SIGABRT, `PyGILState_Release` at interpreter exit) is what `worker.exit_now` prevents.
Prints a table and asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from runtime.settings import PROJECT_ROOT
from tests.conftest import free_port


def start(address: str, wait: float) -> tuple[int, str, float]:
    keep = {"PATH", "HOME", "LANG", "TMPDIR"}
    env = {name: value for name, value in os.environ.items() if name in keep}
    env |= {"TEMPORAL_ADDRESS": address, "RESEARCH_STARTUP_WAIT_SECONDS": str(wait)}
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "worker.py")],
        cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    last = (done.stderr.strip().splitlines() or ["(nothing)"])[-1]
    return done.returncode, last, time.monotonic() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20)
    parser.add_argument("--wait", type=float, default=1.0)
    parser.add_argument("--parallel", type=int, default=2)
    args = parser.parse_args()
    address = f"127.0.0.1:{free_port()}"
    with ThreadPoolExecutor(args.parallel) as pool:
        ends = list(pool.map(lambda _: start(address, args.wait), range(args.starts)))
    print(f"{args.starts} worker starts, Temporal stopped at {address}, wait {args.wait:g} s")
    print(f"{'count':>5}  {'exit':>4}  last line")
    for (code, last), count in Counter((code, last) for code, last, _ in ends).most_common():
        print(f"{count:>5}  {code:>4}  {last[:150]}")
    seconds = sorted(took for _, _, took in ends)
    print(f"seconds per start: median {seconds[len(seconds) // 2]:.1f}, max {seconds[-1]:.1f}")


if __name__ == "__main__":
    main()

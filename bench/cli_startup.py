"""How fast the `research` CLI answers, beside the Temporal CLI doing the same.

    .venv/bin/python -m bench.cli_startup [REPEATS]

Starts `research dev` on a state folder and ports of its own, runs the sample brief once so the
ledger and Temporal hold a run, then times each command REPEATS times (default 10) as a user
types it (a new process each time): `research --version`, `--help`, `status ID` and `runs`,
beside `temporal --version`, `--help`, `workflow describe` and `workflow list` on the same
server, and `python -c pass` (the interpreter's own start). A warm machine, as a user's is: the
commands may write their bytecode caches (PYTHONDONTWRITEBYTECODE is dropped; an installed
package has them, a checkout writes them on its first run), and one pass of every command runs
untimed before the timed ones. Prints the median, the fastest and the slowest of each, then each
research command's median over its Temporal CLI twin's; writes them, dated, with the machine's
cores and load, to bench/results/cli_startup.json (starter.figures). Figures only: nothing here
asserts a speed.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runtime.settings import PROJECT_ROOT
from starter.figures import Measurement
from starter.local import DEMO_BRIEF

BIN = Path(sys.executable).parent
TEMPORAL_PORT = 27433
UI_PORT = 28433
READY_LINE = "Ctrl-C stops everything."
RUN_ID = "research-bench-cli"
# Each research command beside the Temporal CLI command doing the same, for the medians' ratio.
PAIRS = (
    ("research --version", "temporal --version"),
    ("research --help", "temporal --help"),
    ("research status ID", "temporal workflow describe"),
    ("research runs", "temporal workflow list"),
)


def _timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=PROJECT_ROOT, capture_output=True, timeout=120)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr!r}")
    return elapsed


def _stack(state: str) -> tuple[subprocess.Popen[str], dict[str, str]]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("RESEARCH_")}
    env.pop("DATABASE_URL", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # without caches every run compiles our modules
    env |= {
        "RESEARCH_STATE_DIR": state,
        "TEMPORAL_ADDRESS": f"127.0.0.1:{TEMPORAL_PORT}",
        "RESEARCH_UI_PORT": str(UI_PORT),
        "RESEARCH_TASK_QUEUE": "research-bench-cli",
        "PYTHONUNBUFFERED": "1",
    }
    dev = subprocess.Popen(
        [str(BIN / "research"), "dev"],
        env=env, cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    assert dev.stdout is not None
    for line in dev.stdout:
        if line.strip() == READY_LINE:
            return dev, env
    raise SystemExit(f"research dev ended before it was ready ({dev.wait()})")


def main(repeats: int) -> None:
    measurement = Measurement.begin("cli_startup", f"python -m bench.cli_startup {repeats}")
    research, temporal = str(BIN / "research"), str(BIN / "temporal")
    address = ["--address", f"127.0.0.1:{TEMPORAL_PORT}"]
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as state:
        dev, env = _stack(state)
        try:
            started = subprocess.run(
                [research, "start", str(DEMO_BRIEF), "--id", RUN_ID, "--wait"],
                env=env, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            if "Status: " not in started.stdout:
                raise SystemExit(f"the sample run did not end: {started.stderr}")
            commands = {
                "python -c pass": [sys.executable, "-c", "pass"],
                "research --version": [research, "--version"],
                "research --help": [research, "--help"],
                "research status ID": [research, "status", RUN_ID],
                "research runs": [research, "runs"],
                "temporal --version": [temporal, "--version"],
                "temporal --help": [temporal, "--help"],
                "temporal workflow describe": [
                    temporal,
                    "workflow",
                    "describe",
                    "-w",
                    RUN_ID,
                    *address,
                ],
                "temporal workflow list": [temporal, "workflow", "list", "--limit", "20", *address],
            }
            for command in commands.values():  # warm: bytecode caches written, files read
                _timed(command, env)
            times: dict[str, list[float]] = {name: [] for name in commands}
            for _ in range(repeats):  # interleaved, so a burst of load hits every command alike
                for name, command in commands.items():
                    times[name].append(_timed(command, env))
        finally:
            dev.send_signal(signal.SIGINT)
            dev.wait(timeout=60)
    rows = [
        {
            "command": name,
            "median_s": round(statistics.median(values), 3),
            "min_s": round(min(values), 3),
            "max_s": round(max(values), 3),
            "runs": len(values),
        }
        for name, values in times.items()
    ]
    print(f"{'command':<28} {'median':>8} {'min':>8} {'max':>8}")
    for row in rows:
        print(
            f"{row['command']:<28} {row['median_s']:>7.3f}s {row['min_s']:>7.3f}s "
            f"{row['max_s']:>7.3f}s"
        )
    medians = {row["command"]: row["median_s"] for row in rows}
    ratios = {
        f"{ours} / {theirs}": round(medians[ours] / medians[theirs], 2)
        for ours, theirs in PAIRS
        if medians.get(theirs)
    }
    for pair, ratio in ratios.items():  # issue goal for status: at most 2x (a figure, no assert)
        print(f"{pair}: {ratio:.2f}x")
    path = measurement.write({"repeats": repeats, "rows": rows, "ratios": ratios})
    print(f"written to {path.relative_to(PROJECT_ROOT)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)

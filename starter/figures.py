"""Measured figures as data: one JSON file per benchmark or evaluation, saying when, on what
machine and under what load they were measured, so the docs point at a file instead of prose.

    measurement = Measurement.begin("lean", "python -m bench.lean 100")
    ...                                          # measure
    measurement.write({"rows": [...]})           # bench/results/lean.json

A figure that has a goal is written beside it, judged: `Row("CPU per step", "23.1 ms",
goal=AtMost(20, "ms"), value=23.1)` is `{"what": ..., "measured": "23.1 ms", "beside": "",
"goal": "at most 20 ms", "met": false}`, and prints as `not met (at most 20 ms)`.
"""

from __future__ import annotations

import json
import os
import platform
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runtime.settings import PROJECT_ROOT

RESULTS_DIR = PROJECT_ROOT / "bench" / "results"


@dataclass(frozen=True)
class AtMost:
    """A goal: the figure is at most `limit` (in `unit`)."""

    limit: float
    unit: str = ""

    def met(self, value: float) -> bool:
        return value <= self.limit

    def __str__(self) -> str:
        return f"at most {self.limit:g}{self.unit and ' ' + self.unit}"


@dataclass(frozen=True)
class Row:
    """One figure of a table: what, as measured, what stands beside it, and its goal if any
    (`value` is the number the goal judges; `met` states a judgement `AtMost` cannot make)."""

    what: str
    measured: str
    beside: str = ""
    goal: AtMost | str | None = None
    value: float | None = None
    met: bool | None = None

    def judged(self) -> bool | None:
        """Met (True), not met (False), or no goal (None)."""
        if self.met is not None or self.goal is None:
            return self.met
        if isinstance(self.goal, AtMost) and self.value is not None:
            return self.goal.met(self.value)
        return None

    def verdict(self) -> str:
        """`met (at most 20 ms)`, `not met (...)`, or "" without a goal."""
        judged = self.judged()
        if judged is None:
            return ""
        return f"{'met' if judged else 'not met'} ({self.goal})"

    def as_dict(self) -> dict[str, Any]:
        row: dict[str, Any] = {"what": self.what, "measured": self.measured, "beside": self.beside}
        if self.goal is not None:
            row |= {"goal": str(self.goal), "met": self.judged()}
        return row


def print_table(rows: list[Row], measurement: Measurement) -> None:
    """The rows as a table, each figure beside its goal, under the date and the load average."""
    load = " ".join(f"{value:.2f}" for value in measurement.load_at_start) or "unknown"
    print(
        f"\n{measurement.command}: {measurement.started:%Y-%m-%d %H:%M} UTC, load average "
        f"{load} at the start on {machine()['cores']} cores (above the cores: figures under load)"
    )
    width = max(len(row.what) for row in rows)
    print(f"{'what':{width}} | measured | beside it | goal")
    print(f"{'-' * width}-|----------|-----------|-----")
    for row in rows:
        print(f"{row.what:{width}} | {row.measured} | {row.beside} | {row.verdict()}")


@dataclass(frozen=True)
class Measurement:
    name: str
    command: str
    started: datetime
    load_at_start: list[float]

    @classmethod
    def begin(cls, name: str, command: str) -> Measurement:
        return cls(name, command, datetime.now(UTC), _load())

    def write(self, figures: dict[str, Any], path: Path | None = None) -> Path:
        """Write the figures with their date, machine and load; the file's path is returned."""
        target = path or RESULTS_DIR / f"{self.name}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        document = {
            "name": self.name,
            "command": self.command,
            "started": self.started.isoformat(timespec="seconds"),
            "finished": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": machine(),
            # 1-, 5- and 15-minute load averages: above the core count, others shared the CPU.
            "load_average": {"start": self.load_at_start, "end": _load()},
            "figures": figures,
        }
        target.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
        return target


def machine() -> dict[str, Any]:
    """What the figures were measured on: cores, processor, Python and platform."""
    return {
        "cores": os.cpu_count() or 1,
        "processor": _processor(),
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def _load() -> list[float]:
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:  # not every platform reports one
        return []


def _processor() -> str:
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return platform.processor()
    for line in cpuinfo.splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()

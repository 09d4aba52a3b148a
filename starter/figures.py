"""Measured figures as data: one JSON file per benchmark or evaluation, saying when, on what
machine and under what load they were measured, so the docs point at a file instead of prose.

    measurement = Measurement.begin("lean", "python -m bench.lean 100")
    ...                                          # measure
    measurement.write({"rows": [...]})           # bench/results/lean.json
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

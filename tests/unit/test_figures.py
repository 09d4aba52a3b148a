"""Figures as data (starter.figures): a benchmark's or evaluation's file says what was measured,
when, on what machine and under what load."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

from starter.figures import Measurement, machine


def test_a_measurement_writes_its_figures_with_date_machine_and_load(tmp_path: Path) -> None:
    measurement = Measurement.begin("lean", "python -m bench.lean 100")
    path = measurement.write({"rows": [{"what": "x", "measured": "1 ms"}]}, tmp_path / "a/b.json")

    document = json.loads(path.read_text(encoding="utf-8"))
    assert path == tmp_path / "a" / "b.json"
    assert set(document) == {
        "name", "command", "started", "finished", "machine", "load_average", "figures",
    }  # fmt: skip
    assert (document["name"], document["command"]) == ("lean", "python -m bench.lean 100")
    started = datetime.fromisoformat(document["started"])
    assert started.tzinfo is not None
    assert started <= datetime.fromisoformat(document["finished"])
    assert document["machine"]["cores"] == os.cpu_count()
    assert set(document["machine"]) == {"cores", "processor", "python", "platform"}
    assert len(document["load_average"]["start"]) == len(document["load_average"]["end"]) == 3
    assert document["figures"] == {"rows": [{"what": "x", "measured": "1 ms"}]}


def test_the_machine_names_its_cores_and_processor() -> None:
    described = machine()

    assert described["cores"] >= 1 and isinstance(described["processor"], str)

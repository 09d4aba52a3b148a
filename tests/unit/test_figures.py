"""Figures as data (starter.figures): a benchmark's or evaluation's file says what was measured,
when, on what machine and under what load."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from starter.figures import AtMost, Measurement, Row, machine, print_table


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


def test_a_figure_is_written_and_printed_beside_its_goal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        Row("CPU per step", "23.1 ms", "floor 10 s", goal=AtMost(20, "ms"), value=23.1),
        Row("100 runs vs one", "1.40x", "", goal=AtMost(1.5), value=1.4),
        Row("tasks per step", "1.17", "only verify", goal="one a step", met=True),
        Row("prompt tokens", "40,704"),
    ]
    measurement = Measurement.begin("lean", "python -m bench.lean 100")

    document = json.loads(
        measurement.write(
            {"rows": [row.as_dict() for row in rows]}, tmp_path / "x.json"
        ).read_text()
    )
    print_table(rows, measurement)

    assert document["figures"]["rows"] == [
        {"what": "CPU per step", "measured": "23.1 ms", "beside": "floor 10 s",
         "goal": "at most 20 ms", "met": False},
        {"what": "100 runs vs one", "measured": "1.40x", "beside": "", "goal": "at most 1.5",
         "met": True},
        {"what": "tasks per step", "measured": "1.17", "beside": "only verify",
         "goal": "one a step", "met": True},
        {"what": "prompt tokens", "measured": "40,704", "beside": ""},
    ]  # fmt: skip
    printed = capsys.readouterr().out
    assert "| not met (at most 20 ms)" in printed and "| met (at most 1.5)" in printed
    assert "load average" in printed and f"{measurement.started:%Y-%m-%d}" in printed

"""Cassettes: real-model investigations, recorded, played back against the current host.

Each folder holds `calls.json` (the tool calls a real model sent, one list a turn, copied from its
run's responses by `python -m tests.cassettes.copy FOLDER...` and never edited) and `outcome.json`
(how the current host answers them: the run's status, stop reason and every step with its refusal,
written by `python -m tests.cassettes.recut`, never by hand); `recorded.json` (the run's brief and
each step as the host answered it when recorded, copied with calls.json) and `judged.json` (a
reader's FAIR or FALSE on its refusals) make it a recording `research eval --recorded` replays
(starter.recorded). `tests/system/test_cassettes.py`
plays each cassette's calls in order through a fake OpenAI-compatible server against the demo
corpus and asserts the outcome. When a rule changes on purpose, re-cut and read the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RECUT = "RESEARCH_RECUT_CASSETTES"  # set: the test writes outcome.json instead of comparing


def names() -> list[str]:
    return sorted(path.parent.name for path in HERE.glob("*/calls.json"))


def calls(name: str) -> list[list[dict[str, Any]]]:
    turns: list[list[dict[str, Any]]] = json.loads((HERE / name / "calls.json").read_text())
    return turns


def outcome(name: str) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((HERE / name / "outcome.json").read_text())
    return recorded


def write_outcome(name: str, played: dict[str, Any]) -> None:
    text = json.dumps(played, indent=1, ensure_ascii=False) + "\n"
    (HERE / name / "outcome.json").write_text(text)

"""The loop stays readable beside its outline in DESIGN.md: what is not the loop (activity
options, outcomes, the Web UI's details, the result) lives in modules of its own."""

from __future__ import annotations

from pathlib import Path

import workflows.research

MAX_LINES = 500


def test_the_workflow_module_stays_within_its_size() -> None:
    lines = Path(workflows.research.__file__).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, (
        f"workflows/research.py has {lines} lines, above {MAX_LINES}: move what is not the loop "
        "(pure rules, option tables, how a result is assembled) to a module of its own"
    )

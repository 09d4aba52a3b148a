"""Text is made canonical once, where it comes in: the gate makes a report and its evidence
canonical on entry, and no rule under it (`substance`, `quantities`) makes any text so again."""

from __future__ import annotations

from typing import Any

import pytest

import workflows.canonical
import workflows.gate
import workflows.quantities.reader
import workflows.substance
from tests.unit.test_real_transcripts import CASES, TRANSCRIPTS, brief, finish_gaps, parsed
from workflows.canonical import Canonical, canonical

FINISHES = [case for case in CASES if case["tool"] == "finish_research"]


def _texts_given(case: dict[str, Any]) -> int:
    """How many texts the gate is handed: the report's, each quote and its sentence, the brief's."""
    report = parsed(case)
    evidence = [item for item in TRANSCRIPTS["runs"][case["run"]]["evidence"]]
    questions = brief(case["run"]).questions
    return len(report.findings) + 2 + 2 * len(evidence) + len(questions) + 1


def test_canonical_text_is_returned_as_it_is() -> None:
    made = canonical("10\u00b2 ms")
    assert isinstance(made, Canonical) and made == "10^2 ms"
    assert canonical(made) is made


def test_a_report_is_made_canonical_once_at_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str] = []
    checking: list[bool] = []
    entered = 0

    def counted(text: str) -> Canonical:
        if checking and not isinstance(text, Canonical):
            made.append(text)
        return canonical(text)

    for module in (workflows.gate, workflows.substance, workflows.quantities.reader):
        monkeypatch.setattr(module, "canonical", counted)
    intake = workflows.gate._canonical

    def entering(report: Any) -> Any:
        checking.append(True)  # from here on, inside the gate
        return intake(report)

    monkeypatch.setattr(workflows.gate, "_canonical", entering)
    workflows.quantities.reader._read.cache_clear()
    for case in FINISHES:
        finish_gaps(case)
        entered += len(checking)
        checking.clear()  # the next case's sources are read outside the gate
    assert entered == len(FINISHES)
    # Before the toolkit: 929 texts made canonical for these 7 reports, each piece over again.
    assert 0 < len(made) <= sum(_texts_given(case) for case in FINISHES)
    assert workflows.canonical.canonical is canonical

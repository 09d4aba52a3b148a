"""The pure parts of `research rerun`: the brief that carries the source run, and the comparison."""

from __future__ import annotations

import json

from starter.comparison import EvidenceView, RunView, StepView, compare, render
from workflows.models import Brief, Counters, Finding

BRIEF = {"question": "How are retries bounded?", "allowed_hosts": ["docs.example"]}


def test_a_brief_without_a_source_run_serialises_as_it_always_did() -> None:
    """Recorded histories and every context budget depend on the brief's JSON: unchanged."""
    brief = Brief.model_validate(BRIEF)

    assert "rerun_of" not in json.loads(brief.model_dump_json())
    assert "rerun_of" not in brief.model_dump()
    rerun = brief.model_copy(update={"rerun_of": "research-1a2b3c4d"})
    assert json.loads(rerun.model_dump_json())["rerun_of"] == "research-1a2b3c4d"
    assert Brief.model_validate_json(rerun.model_dump_json()).rerun_of == "research-1a2b3c4d"


def _view(run_id: str, steps: list[StepView], status: str = "completed") -> RunView:
    return RunView(
        run_id=run_id,
        status=status,
        stop_reason="coverage_gate_passed" if status == "completed" else "provider_error",
        counters=Counters(steps=len(steps)),
        steps=steps,
        evidence=[EvidenceView(id="E001", question_id="Q1", url="https://a.example/", quote="q")],
        answer="Retries stop after 5 attempts.",
        findings=[Finding(text="Five attempts.", evidence_ids=["E001"])],
    )


SEARCH = StepView(step=1, tool="search_web", arguments='{"query": "retries"}', outcome="ok")
FINISH = StepView(step=2, tool="finish_research", arguments="{}", outcome="ok")


def test_two_runs_that_agree_have_no_differences_whatever_their_ids() -> None:
    comparison = compare(
        _view("research-a", [SEARCH, FINISH]), _view("research-b", [SEARCH, FINISH])
    )

    assert comparison.identical and comparison.differences == []
    lines = render(comparison)
    assert not [line for line in lines if line.startswith("*")]
    assert "    2 = finish_research {} -> ok" in lines
    assert lines[-1].startswith("Differences: none")


def test_a_missing_step_and_a_changed_outcome_are_each_a_difference() -> None:
    short = _view("research-b", [SEARCH], status="failed")

    comparison = compare(_view("research-a", [SEARCH, FINISH]), short)

    assert not comparison.identical
    assert comparison.differences[:3] == [
        "status: completed (source) vs failed (rerun)",
        "stop reason: coverage_gate_passed (source) vs provider_error (rerun)",
        "steps: 2 (source) vs 1 (rerun)",
    ]
    assert "step 2: finish_research {} -> ok (source) vs (none) (rerun)" in comparison.differences
    lines = render(comparison)
    assert "* status          completed" in "\n".join(lines)
    assert "    2 source: finish_research {} -> ok" in lines
    assert "      rerun:  (none)" in lines
    assert (
        lines[-len(comparison.differences) - 1] == f"Differences ({len(comparison.differences)}):"
    )

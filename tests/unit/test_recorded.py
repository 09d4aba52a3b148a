"""The recorded arm's reading of a replay (starter.recorded): its end, the first step the current
host answered otherwise than the recording, and what became of each judged refusal."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from activities.ledger.review import StepRow
from runtime.settings import PROJECT_ROOT
from starter.recorded import Judged, Recording, load_recording, replayed_row
from tests import cassettes
from workflows.models import Counters, Report, RunResult, RunStatus, StopReason

RECORDED = [
    (1, "search_web", True, ""),
    (2, "record_evidence", False, "the claim states 2.1, which the quote does not contain"),
    (3, "finish_research", False, "the coverage gate failed: the limitations state third-party"),
    (4, "finish_research", True, ""),
]
BRIEF = load_recording(cassettes.HERE / "run1-harborq").brief
JUDGED = [
    Judged(2, "states 2.1", "FAIR"),
    Judged(3, "third-party", "FALSE"),
]


def _recording() -> Recording:
    return Recording(
        name="r", brief=BRIEF, corpus=Path("."), host=None, verifier="", turns=[],
        status="completed", stop_reason="coverage_gate_passed", steps=RECORDED, judged=JUDGED,
    )  # fmt: skip


def _rows(steps: list[tuple[int, str, bool, str]]) -> list[StepRow]:
    now = datetime.now(UTC)
    return [
        StepRow(step=s, turn=s, tool=t, ok=ok, error=e or None, recorded_at=now)
        for s, t, ok, e in steps
    ]


def _result(status: RunStatus, stop: StopReason, message: str = "") -> RunResult:
    return RunResult(
        message=message,
        run_id="x", status=status, stop_reason=stop, counters=Counters(), evidence_count=0,
        source_count=0, independent_sources=0, report=Report(answer=""),
        verified=False if status is RunStatus.COMPLETED else None,
    )  # fmt: skip


def _row(
    steps: list[tuple[int, str, bool, str]], status: RunStatus, stop: StopReason, message: str = ""
) -> Any:
    return replayed_row(_recording(), _result(status, stop, message), _rows(steps))


def test_a_replay_answered_as_recorded_has_no_divergence_and_keeps_the_verdicts() -> None:
    row = _row(RECORDED, RunStatus.COMPLETED, StopReason.COVERAGE_GATE_PASSED)
    assert row["end"] == "completed" and row["divergence"] is None
    assert [(j["now"], j["as_judged"]) for j in row["judged"]] == [
        ("refused for it", True),  # FAIR, still refused
        ("refused for it", False),  # FALSE, still made: not as judged
    ]


def test_a_false_refusal_no_longer_made_is_a_divergence_the_verdicts_see() -> None:
    steps = [*RECORDED[:2], (3, "finish_research", True, "")]
    row = _row(steps, RunStatus.COMPLETED, StopReason.COVERAGE_GATE_PASSED)
    assert row["divergence"]["step"] == 3
    assert row["divergence"]["recorded"].startswith("finish_research refused")
    assert row["divergence"]["replayed"] == "finish_research accepted"
    assert [(j["now"], j["as_judged"]) for j in row["judged"]] == [
        ("refused for it", True),
        ("accepted", True),
    ]


def test_a_step_refused_that_was_accepted_diverges_and_later_verdicts_are_not_compared() -> None:
    steps = [(1, "search_web", False, "no search left"), *RECORDED[1:]]
    row = _row(steps, RunStatus.COMPLETED, StopReason.COVERAGE_GATE_PASSED)
    assert row["divergence"]["step"] == 1
    assert [j["as_judged"] for j in row["judged"]] == [None, None]
    assert {j["now"] for j in row["judged"]} == {"after the divergence"}


def test_a_replay_that_runs_out_of_recorded_turns_ends_so_and_says_where() -> None:
    said = "replay of run s: it recorded no model decision for turn 3, so the rerun stops here"
    row = _row(RECORDED[:2], RunStatus.FAILED, StopReason.PROVIDER_ERROR, said)
    assert row["end"] == "out of recorded turns at turn 3"
    assert row["divergence"] == {
        "step": 3, "recorded": "", "replayed": "only the recording has this step"
    }  # fmt: skip
    assert row["judged"][1]["now"] == "not reached"


def test_a_submission_the_gate_passes_that_no_verifier_read_is_accepted_by_the_gate() -> None:
    said = (
        "replay of run s: it recorded no verdict on the answer as submitted at step 3, so the "
        "rerun stops here instead of asking a verifier"
    )
    row = _row(RECORDED[:2], RunStatus.FAILED, StopReason.PROVIDER_ERROR, said)
    assert row["end"] == "gate passed, no recorded verdict"
    assert row["divergence"]["step"] == 3
    assert row["divergence"]["replayed"] == "finish_research accepted"
    assert [(j["now"], j["as_judged"]) for j in row["judged"]] == [
        ("refused for it", True),
        ("accepted", True),
    ]


def test_a_provider_error_of_another_kind_is_incomplete() -> None:
    row = _row(RECORDED[:2], RunStatus.FAILED, StopReason.PROVIDER_ERROR, "the model is down")
    assert row["end"] == "incomplete: provider_error"


@pytest.mark.parametrize("name", cassettes.names())
def test_every_cassette_is_a_recording_the_eval_can_replay(name: str) -> None:
    recording = load_recording(cassettes.HERE / name)
    assert recording.corpus.is_dir() and not recording.verifier and not recording.verdicts
    assert len(recording.turns) >= len(recording.steps) > 0


CELERY = sorted(
    p.parent for p in (PROJECT_ROOT / "tests/transcripts/celery").glob("*/recorded.json")
)


@pytest.mark.parametrize("folder", CELERY, ids=lambda folder: folder.name)
def test_every_celery_run_is_a_recording_checked_by_its_verifier(folder: Path) -> None:
    recording = load_recording(folder)
    assert recording.verifier and recording.host == "docs.celeryq.example"
    assert len(recording.turns) >= len(recording.steps) > 0
    finishes = {step for step, tool, *_ in recording.steps if tool == "finish_research"}
    assert {step for step, _ in recording.verdicts} <= finishes


@pytest.mark.parametrize(
    "folder", [cassettes.HERE / name for name in cassettes.names()] + CELERY, ids=str
)
def test_each_judged_refusal_names_a_refusal_the_run_met(folder: Path) -> None:
    recording = load_recording(folder)
    refused = {step: error for step, _, ok, error in recording.steps if not ok}
    for item in recording.judged:
        assert item.says in refused.get(item.step, ""), (item, refused.get(item.step))


def test_a_judged_verdict_is_fair_or_false(tmp_path: Path) -> None:
    source = cassettes.HERE / "run8-harborq-conflict"
    for file in ("calls.json", "recorded.json"):
        (tmp_path / file).write_text((source / file).read_text())
    (tmp_path / "judged.json").write_text('[{"step": 8, "says": "x", "verdict": "WRONG"}]')
    with pytest.raises(ValueError, match="FAIR or FALSE"):
        load_recording(tmp_path)

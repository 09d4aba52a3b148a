"""`research replay FILE` as CI runs it: exit 0 when the recorded history replays, 1 with the first
divergence in one paragraph when the code would decide otherwise, 2 when there is nothing to
replay. (The run-id form, fetching from Temporal, is in tests/system/test_operations.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from starter.cli import main
from tests.workflow.test_replay import HISTORIES


def history(name: str) -> Path:
    return next(path for path in HISTORIES if path.stem == name)


def replay(target: Path | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["replay", str(target)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_recorded_history_replays_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = replay(history("demo-offline"), capsys)

    assert (code, err) == (0, "")
    assert out == "replays cleanly: demo-offline-recorded (37 events) against the current code\n"


def test_a_history_the_code_would_not_repeat_diverges_in_one_paragraph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first model call recorded as a search: the current code schedules `decide` there."""
    data = json.loads(history("demo-openai").read_text())
    scheduled = next(
        event["activityTaskScheduledEventAttributes"]
        for event in data["events"]
        if "activityTaskScheduledEventAttributes" in event
    )
    assert scheduled["activityType"]["name"] == "decide"
    scheduled["activityType"]["name"] = "search_web"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(data))

    code, out, err = replay(changed, capsys)

    assert (code, err) == (1, "")
    assert out.count("\n") == 1, out  # one paragraph
    assert out.startswith("diverges: demo-openai-recorded (")
    assert (
        "[TMPRL1100] Nondeterminism error: Activity type of scheduled event 'search_web' does not "
        "match activity type of activity command 'decide'"
    ) in out
    assert "ship the change as a new build" in out


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        ("{not json", "not a workflow history"),
        ('{"events": []}', "holds no events"),
        ('{"question": "a brief, not a history"}', "not a workflow history"),
    ],
)
def test_nothing_to_replay_is_one_sentence_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None, expected: str
) -> None:
    path = tmp_path / "history.json"
    if content is not None:
        path.write_text(content)

    code, out, err = replay(path, capsys)

    assert (code, out) == (2, "")
    assert err.startswith(f"error: history {path}: {expected}")
    assert err.count("\n") == 1

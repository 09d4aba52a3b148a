"""Recorded histories replay against the current workflow code: a change that would alter the
decisions of running workflows fails here (re-record only on purpose, with a versioning plan)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from runtime.converter import DATA_CONVERTER
from workflows.research import ResearchWorkflow

HISTORIES = sorted((Path(__file__).parent.parent / "histories").glob("*.json"))


def test_there_are_recorded_histories() -> None:
    assert HISTORIES, "tests/histories holds no recorded history"


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
async def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json("replayed", path.read_text())
    replayer = Replayer(workflows=[ResearchWorkflow], data_converter=DATA_CONVERTER)
    result = await replayer.replay_workflow(history, raise_on_replay_failure=True)
    assert result.replay_failure is None


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
def test_each_history_shows_the_branch_it_replays(path: Path) -> None:
    """*-lean histories carry the lean-loop patch and run ledger work as local activities; the
    older ones do neither, so both branches of the patch stay covered."""
    events = WorkflowHistory.from_json("replayed", path.read_text()).events
    markers = [
        event.marker_recorded_event_attributes.marker_name
        for event in events
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    lean = path.stem.endswith("-lean")
    assert ("core_patch" in markers) is lean
    assert ("core_local_activity" in markers) is lean

"""Recorded histories replay against the current workflow code: a change that would alter the
decisions of running workflows fails here (re-record only on purpose, with a versioning plan).

They replay through `research replay`'s own function, so CI and an operator run the same check
(the worker's workflows and plugins, the project's data converter)."""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from starter.replay import replay_history
from tests.workflow.harness import markers_of, patches_of
from workflows.research import (
    LEAN_LOOP,
    LOCAL_POLICY,
    RETRY_BY_CAUSE,
    SEED_CHECKS,
    TRANSCRIPT_IN_LEDGER,
)

HISTORIES = sorted((Path(__file__).parent.parent / "histories").glob("*.json"))


def test_there_are_recorded_histories() -> None:
    assert HISTORIES, "tests/histories holds no recorded history"


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
async def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json("replayed", path.read_text())
    assert await replay_history(history) is None


# Each recorded history's name says which patches it was recorded with: every branch stays covered.
BRANCHES = {
    "offline": set(),
    "lean": {LEAN_LOOP},
    "ledger": {LEAN_LOOP, TRANSCRIPT_IN_LEDGER},
    "local": {LEAN_LOOP, TRANSCRIPT_IN_LEDGER, LOCAL_POLICY},
    "cause": {LEAN_LOOP, TRANSCRIPT_IN_LEDGER, LOCAL_POLICY, RETRY_BY_CAUSE},
    "seeds": {LEAN_LOOP, TRANSCRIPT_IN_LEDGER, LOCAL_POLICY, RETRY_BY_CAUSE, SEED_CHECKS},
}


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
def test_each_history_shows_the_branch_it_replays(path: Path) -> None:
    history = WorkflowHistory.from_json("replayed", path.read_text())
    markers = markers_of(history)
    patches = patches_of(history)
    assert patches == BRANCHES[path.stem.rsplit("-", 1)[1]]
    local = any(marker.marker_name == "core_local_activity" for marker in markers)
    assert local is bool(patches), "the lean loop runs ledger work as local activities"

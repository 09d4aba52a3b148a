"""Recorded histories replay against the current workflow code: a change that would alter the
decisions of running workflows fails here (re-record only on purpose, with a versioning plan).

They replay through `research replay`'s own function, so CI and an operator run the same check
(the worker's workflows and plugins, the project's data converter)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from starter.replay import replay_history
from tests.histories.record import SCENARIOS
from tests.workflow.harness import markers_of, patches_of

ROOT = Path(__file__).parent.parent.parent
HISTORIES = sorted((ROOT / "tests" / "histories").glob("*.json"))


def test_every_scenario_is_recorded() -> None:
    assert [path.stem for path in HISTORIES] == sorted(SCENARIOS)


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
async def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json("replayed", path.read_text())
    assert await replay_history(history) is None


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
def test_each_history_shows_its_provider_shape(path: Path) -> None:
    """Ledger work is always a local activity; `decide` is one only for a policy in the worker."""
    history = WorkflowHistory.from_json("replayed", path.read_text())
    shape, _ = SCENARIOS[path.stem]
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    ]
    assert any(marker.marker_name == "core_local_activity" for marker in markers_of(history))
    assert ("decide" in scheduled) is (shape == "openai"), scheduled
    # A model's completed run asks the verifier once the gate passed; the offline policy's never
    # does (its deterministic checks are its verifier).
    assert ("verify" in scheduled) is (path.stem == "demo-openai"), scheduled
    assert not patches_of(history), "recorded with the one code path: no patch markers"


def test_at_most_one_live_patch() -> None:
    """Workflow changes ship as new worker deployment versions; `workflow.patched` is for a
    hotfix only, one at a time (then `deprecate_patch`, then removal)."""
    calls = [
        match
        for source in (ROOT / "workflows").rglob("*.py")
        for match in re.findall(r"workflow\.(?:patched|deprecate_patch)\(", source.read_text())
    ]
    assert len(calls) <= 1, calls

"""Recorded histories replay against the current workflow code: a change that would alter the
decisions of running workflows fails here (re-record only on purpose, with a versioning plan).

They replay through `research replay`'s own function, so CI and an operator run the same check
(the worker's workflows and plugins, the project's data converter)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory

from starter.history import continued_from, history_facts
from starter.replay import replay_history
from tests.histories.record import CONTINUE_EVERY, LANE_SCENARIOS, SCENARIOS
from tests.workflow.harness import markers_of, patches_of

ROOT = Path(__file__).parent.parent.parent
HISTORIES = sorted((ROOT / "tests" / "histories").glob("*.json"))


def _scenario(path: Path) -> tuple[str, int]:
    """The scenario a file records and which execution (1: the first; `NAME.2.json`: the second
    of a run that continued as new)."""
    name, _, number = path.stem.partition(".")
    return name, int(number or 1)


def test_every_scenario_is_recorded() -> None:
    assert sorted({_scenario(path)[0] for path in HISTORIES}) == sorted(SCENARIOS)
    for name in CONTINUE_EVERY:  # a continued run: its executions, numbered from 1 without gaps
        numbers = sorted(n for path in HISTORIES for s, n in [_scenario(path)] if s == name)
        assert len(numbers) > 1 and numbers == list(range(1, len(numbers) + 1)), numbers


def test_a_continued_scenario_is_one_investigation_across_its_files() -> None:
    """Each later execution's input carries the run (Continuation); the chain is unbroken."""
    for name in CONTINUE_EVERY:
        files = sorted((p for p in HISTORIES if _scenario(p)[0] == name), key=_scenario)
        chain = [WorkflowHistory.from_json(name, path.read_text()) for path in files]
        for before, history in itertools.pairwise(chain):
            assert continued_from(history) == (
                before.events[0].workflow_execution_started_event_attributes
                .original_execution_run_id
            )  # fmt: skip
        facts = history_facts(chain)
        assert facts.closed == "completed" and facts.result is not None
        assert len(facts.of_type("start_run")) == 1
        steps = facts.result.counters.steps
        recorded = [step[0] if step else None for step in facts.recorded_steps()]
        assert recorded == list(range(1, steps + 1)) and steps > CONTINUE_EVERY[name]


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
async def test_recorded_history_replays(path: Path) -> None:
    history = WorkflowHistory.from_json("replayed", path.read_text())
    assert await replay_history(history) is None


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
def test_each_history_shows_its_provider_shape(path: Path) -> None:
    """Ledger work is always a local activity; `decide` is one only for a policy in the worker."""
    history = WorkflowHistory.from_json("replayed", path.read_text())
    name, number = _scenario(path)
    shape, _ = SCENARIOS[name]
    last = not any(_scenario(other) == (name, number + 1) for other in HISTORIES)
    scheduled = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.HasField("activity_task_scheduled_event_attributes")
    ]
    assert any(marker.marker_name == "core_local_activity" for marker in markers_of(history))
    assert ("decide" in scheduled) is (shape == "openai"), scheduled
    # A model's completed run asks the verifier once the gate passed; the offline policy's never
    # does (its deterministic checks are its verifier).
    finished_by_model = name in ("demo-openai", *CONTINUE_EVERY, *LANE_SCENARIOS) and last
    assert ("verify" in scheduled) is finished_by_model, scheduled
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

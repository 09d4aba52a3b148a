"""The run scope: every activity input carries one (and no loose run id, step or turn), and its
constructors say, for each kind of activity, what a reset's new execution already holds."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from workflows import contracts
from workflows.activity import Activity
from workflows.models import Counters
from workflows.scope import ForkPoint, RunScope
from workflows.tools.read_page import READ_PAGE_ACTIVITY
from workflows.tools.record_evidence import RECORD_EVIDENCE_ACTIVITY
from workflows.tools.search_web import SEARCH_WEB_ACTIVITY

INPUTS = [
    contracts.START_RUN_ACTIVITY,
    contracts.DECIDE_ACTIVITY,
    SEARCH_WEB_ACTIVITY,
    READ_PAGE_ACTIVITY,
    RECORD_EVIDENCE_ACTIVITY,
    contracts.RECORD_STEP_ACTIVITY,
    contracts.SAVE_REPORT_ACTIVITY,
]


@pytest.mark.parametrize("activity", INPUTS, ids=lambda activity: activity.name)
def test_every_activity_input_carries_one_scope_and_no_loose_keys(
    activity: Activity[BaseModel, BaseModel],
) -> None:
    fields = activity.input.model_fields
    assert fields["scope"].annotation is RunScope
    loose = {"run_id", "step", "turn", "parent_execution", "execution_id"} & set(fields)
    assert not loose, f"{activity.name} repeats {sorted(loose)} beside its scope"


def test_each_activity_forks_after_what_precedes_it() -> None:
    # decide for turn 4 after 6 steps: three turns answered, six steps done
    assert RunScope.turn_of("r", "x", 4, 6, "p").fork == ForkPoint(
        turns=3, steps=6, work=6, parent="p"
    )
    # a tool's activity for step 7, asked in turn 4: six steps done, the turn answered
    assert RunScope.tool_of("r", "x", 7, 4, "p").fork == ForkPoint(
        turns=4, steps=6, work=6, parent="p"
    )
    # ... from an input that did not know its turn: the parent's record of step 7 says
    assert RunScope.tool_of("r", "x", 7, 0, "").fork == ForkPoint(turns=None, steps=6, work=6)
    # record_step for step 7: its work is done, its row not
    assert RunScope.record_of("r", "x", 7, 4, "").fork == ForkPoint(turns=4, steps=6, work=7)
    # save_report: everything counted is done
    ended = RunScope.end_of("r", "x", Counters(steps=9, model_calls=5), "")
    assert ended.fork == ForkPoint(turns=5, steps=9, work=9)
    assert (ended.run_id, ended.execution, ended.step, ended.turn) == ("r", "x", 9, 5)
    assert RunScope.start("r", "x") == RunScope(run_id="r", execution="x")


def test_an_activity_carrying_step_rows_forks_with_them_unwritten_and_their_work_done() -> None:
    # decide for turn 5 carrying steps 5-6 (a parallel turn's): rows up to 4, work up to 6
    assert RunScope.turn_of("r", "x", 5, 6, "p", rows=4).fork == ForkPoint(
        turns=4, steps=4, work=6, parent="p"
    )
    # record_step of step 5 flushed after step 6 was taken: every step's work is done
    assert RunScope.record_of("r", "x", 5, 4, "", done=6).fork == ForkPoint(
        turns=4, steps=4, work=6
    )
    # the report's save carrying step 9 of 9
    ended = RunScope.end_of("r", "x", Counters(steps=9, model_calls=5), "", rows=8)
    assert ended.fork == ForkPoint(turns=5, steps=8, work=9)

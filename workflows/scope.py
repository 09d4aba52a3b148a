"""The run scope every activity input carries (pure): which run, execution, step and model turn
the activity works for, and where the run forks if it is the first activity of a new execution.

A reset ("replay from here") starts a new execution of the same workflow id; what came before the
reset point is replayed from history, so the new execution's first activity may be any of them.
The ledger keeps each execution's own rows: when an activity of an execution it has not seen
arrives, it copies the rows that precede the scope's `fork` from the execution the workflow last
heard wrote them (`ForkPoint.parent`), once (`activities.ledger.Ledger.bind`). The constructors
below are the one place that says, for each kind of activity, what precedes it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from workflows.models import Counters


class ForkPoint(BaseModel):
    """What an execution already holds from its history when an activity runs: the model turns up
    to `turns` (None: the turn of step `work + 1`, else every turn, as the parent recorded them),
    the step rows up to `steps`, and the work of steps (searches, sources, evidence) up to `work`
    (more than `steps` when steps' work is done, their rows not)."""

    model_config = ConfigDict(frozen=True)

    turns: int | None = None
    steps: int = 0
    work: int = 0
    # The execution whose rows precede the point: the one that wrote the rows the new execution
    # replayed (the workflow's last word from the ledger, replayed from history after a reset);
    # empty, or unknown to the ledger: the run's current execution.
    parent: str = ""


class RunScope(BaseModel):
    """Where an activity's work belongs: its run, execution, step and turn, and its fork point."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    # The Temporal run that scheduled the activity, which the ledger keys the rows by (empty: the
    # activity's own, as Temporal reports it; none outside a workflow: the run's current one).
    execution: str = ""
    step: int = 0  # the step the activity serves (0: none, or unknown)
    turn: int = 0  # the model turn it serves or that asked for it (0: unknown)
    fork: ForkPoint = ForkPoint()

    @classmethod
    def start(cls, run_id: str, execution: str) -> RunScope:
        """`start_run`: the run's first rows (it never forks)."""
        return cls(run_id=run_id, execution=execution)

    @classmethod
    def turn_of(
        cls,
        run_id: str,
        execution: str,
        turn: int,
        steps_done: int,
        parent: str,
        rows: int | None = None,
    ) -> RunScope:
        """`decide` for `turn`: the turns before it are answered, `steps_done` steps are done, the
        step rows written up to `rows` (None: all of them; the decide records the rest)."""
        written = steps_done if rows is None else rows
        fork = ForkPoint(turns=turn - 1, steps=written, work=steps_done, parent=parent)
        return cls(run_id=run_id, execution=execution, step=steps_done, turn=turn, fork=fork)

    @classmethod
    def tool_of(cls, run_id: str, execution: str, step: int, turn: int, parent: str) -> RunScope:
        """A tool's activity for `step`: the steps before it are done, the turn that asked is
        answered (0: unknown, the parent's record says)."""
        done = max(step - 1, 0)
        fork = ForkPoint(turns=turn or None, steps=done, work=done, parent=parent)
        return cls(run_id=run_id, execution=execution, step=step, turn=turn, fork=fork)

    @classmethod
    def record_of(
        cls, run_id: str, execution: str, step: int, turn: int, parent: str, done: int = 0
    ) -> RunScope:
        """`record_step` for `step`: its work (search, page, quote) is done, and that of the steps
        up to `done` when later ones were taken before it is recorded; its row is not."""
        fork = ForkPoint(turns=turn, steps=step - 1, work=max(step, done), parent=parent)
        return cls(run_id=run_id, execution=execution, step=step, turn=turn, fork=fork)

    @classmethod
    def end_of(
        cls, run_id: str, execution: str, counters: Counters, parent: str, rows: int | None = None
    ) -> RunScope:
        """`save_report`: every turn and step counted is done, the step rows written up to `rows`
        (None: all of them; the save records the rest)."""
        steps, turns = counters.steps, counters.model_calls
        written = steps if rows is None else rows
        fork = ForkPoint(turns=turns, steps=written, work=steps, parent=parent)
        return cls(run_id=run_id, execution=execution, step=steps, turn=turns, fork=fork)

"""Continue-as-new for long investigations (pure): when a run moves on to a fresh execution, and
what it carries there so that the executions behave as one investigation.

A run's history grows with every step (each activity's input and result is recorded), toward
Temporal's limits (51,200 events, 50 MB). Before a model turn, once this execution has taken
`continue_after_steps` steps, or its history reaches `HISTORY_BYTES` or `HISTORY_EVENTS`, or
Temporal suggests it, the run continues as new: same workflow id, a new execution (run id) whose
input is the brief and a `Continuation`. The bounds are checked first: a run whose bound tripped
ends in the execution it is in. The new execution's first activity forks the ledger from the
execution the run last wrote under (`workflows.scope`), as after a reset, so every execution keeps
the whole investigation's rows.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.contracts import StartRunResult
from workflows.state import RunState
from workflows.transcript import TranscriptEntry

# The steps one execution takes come from the worker (RESEARCH_CONTINUE_AS_NEW_STEPS, at most
# STEPS_PER_EXECUTION): start_run records them, so replay decides the same (0, as recorded before
# continue-as-new existed: the run never continues). bench.long_run measures what 100 steps of a
# model over HTTP hold (about 14 KB of history a step).
# Whichever comes first: the history as Temporal reports it to the workflow task.
HISTORY_BYTES = 2_000_000
HISTORY_EVENTS = 10_000
RECENT_ENTRIES = 50  # transcript entries carried: what the progress query shows


class TraceParent(BaseModel):
    """The root span of the execution before (ids as integers): the next root span is its child,
    so one investigation stays one trace."""

    trace_id: int = 0
    span_id: int = 0


class Continuation(BaseModel):
    """What a run carries into the execution it continues as."""

    state: RunState  # counters, limits (extended ones too), deadline's start, evidence, sources,
    # discovered URLs, seeds, guidance, finish request, the writer execution; the transcript's tail
    started: StartRunResult  # what start_run recorded (the worker's facts), never asked again
    turn_start: int = 0  # the first step of the latest turn (its results are shown whole)
    execution: int = 2  # this execution's place in the chain (the first is 1)
    steps_before: int = 0  # steps taken before this execution
    # The search attributes last set: status and stop reason, and the lanes (since lanes).
    upserted: tuple[str, ...] | None = None
    trace: TraceParent = Field(default_factory=TraceParent)


def should_continue(
    started: StartRunResult,
    steps_here: int,
    history_bytes: int,
    history_events: int,
    suggested: bool,
) -> bool:
    """Whether the run continues as new before its next model turn. Only runs whose start_run
    recorded a step threshold continue (a run started before this rule never does)."""
    every = started.continue_after_steps
    if every <= 0 or steps_here <= 0:
        return False
    return (
        steps_here >= every
        or history_bytes >= HISTORY_BYTES
        or history_events >= HISTORY_EVENTS
        or suggested
    )


def carried_state(state: RunState) -> RunState:
    """The state as carried: whole, but the transcript cut to what the progress query shows (the
    model's transcript is read back from the ledger, never from the workflow)."""
    tail: list[TranscriptEntry] = state.transcript[-RECENT_ENTRIES:]
    return state.model_copy(update={"transcript": tail})

"""How long a killed worker held its runs, read from their histories (for `bench.chaos`).

An aimed kill targets either a started regular activity (`decide`, `verify`: the pending activity
names its worker, pid@host) or a started workflow task, where local activities run (its
WorkflowTaskStarted event names the worker). Its recovery is the dead time the kill cost the run:

- a regular activity: from the kill until its retry started on another worker (the heartbeat
  timeout, then the retry's back-off), plus from the retry's result until the run's next workflow
  task started (a dead worker's sticky queue held it up to the sticky timeout);
- a workflow task: from the kill until the task started again on another worker (Temporal's
  workflow task timeout).

The time the retry itself worked is not dead time: it is left out, so kinds compare. A kill that
landed after the aimed work had ended is `missed` and not counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from temporalio.api.enums.v1 import (
    EventType,
    PendingActivityState,
    PendingWorkflowTaskState,
    TimeoutType,
)
from temporalio.api.history.v1 import HistoryEvent
from temporalio.api.workflowservice.v1 import GetWorkflowExecutionHistoryReverseRequest
from temporalio.client import Client, WorkflowExecutionDescription

LOCAL = "local"  # the kind of a kill aimed at a workflow task (its local activities)
E = EventType
_TASK_ENDED = {
    E.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    E.EVENT_TYPE_WORKFLOW_TASK_FAILED,
}


@dataclass
class Aim:
    """What an aimed kill hit: a run's started activity attempt, or its started workflow task."""

    pid: int
    run_id: str
    kind: str  # the activity type, or LOCAL
    activity_id: str = ""
    attempt: int = 0
    task_started: int = 0  # LOCAL: the task's WorkflowTaskStarted event id


async def targets(client: Client, description: WorkflowExecutionDescription) -> list[Aim]:
    """The work of a run a kill could hit now: its started activities and workflow task."""
    raw = description.raw_description
    found = [
        Aim(_pid(pending.last_worker_identity), description.id, pending.activity_type.name,
            pending.activity_id, pending.attempt)
        for pending in raw.pending_activities
        if pending.state == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
        and "@" in pending.last_worker_identity
    ]  # fmt: skip
    if (
        raw.pending_workflow_task.state
        == PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED
    ):
        started = await _task_started(client, description)
        if started is not None and "@" in started.workflow_task_started_event_attributes.identity:
            identity = started.workflow_task_started_event_attributes.identity
            found.append(Aim(_pid(identity), description.id, LOCAL, task_started=started.event_id))
    return found


async def _task_started(
    client: Client, description: WorkflowExecutionDescription
) -> HistoryEvent | None:
    """The running workflow task's WorkflowTaskStarted event (None: a retried task, whose event
    is written only when it ends)."""
    request = GetWorkflowExecutionHistoryReverseRequest(
        namespace=client.namespace, maximum_page_size=20
    )
    request.execution.workflow_id = description.id
    request.execution.run_id = description.run_id
    page = await client.workflow_service.get_workflow_execution_history_reverse(request)
    for event in page.history.events:
        if event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_STARTED:
            return event
        if event.event_type in _TASK_ENDED:
            return None
    return None


def _pid(identity: str) -> int:
    return int(identity.split("@", 1)[0])


def dead_time(events: Sequence[HistoryEvent], aim: Aim, killed_at: float) -> float | None:
    """Seconds of dead time the kill at `killed_at` (epoch seconds) cost; None when it missed."""
    if aim.kind == LOCAL:
        timed_out = _first(
            events,
            lambda e: (
                e.event_type == E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
                and e.workflow_task_timed_out_event_attributes.started_event_id == aim.task_started
            ),
        )
        again = timed_out and _first(events, _task_started_after(timed_out.event_id))
        return None if again is None else _seconds(again) - killed_at
    scheduled = _first(
        events,
        lambda e: (
            e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and e.activity_task_scheduled_event_attributes.activity_id == aim.activity_id
        ),
    )
    if scheduled is None:
        return None
    started = _first(
        events,
        lambda e: (
            e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_STARTED
            and e.activity_task_started_event_attributes.scheduled_event_id == scheduled.event_id
        ),
    )
    if started is None or started.activity_task_started_event_attributes.attempt <= aim.attempt:
        return None  # the killed attempt ended on its own
    closed = _first(events, lambda e: e.event_id > started.event_id and _closes(e, scheduled))
    resumed = closed and _first(events, _task_started_after(closed.event_id))
    if closed is None or resumed is None:
        return None
    return (_seconds(started) - killed_at) + (_seconds(resumed) - _seconds(closed))


def settled(events: Sequence[HistoryEvent], aim: Aim) -> bool:
    """Whether the run has moved past the aimed work: a workflow task started after it ended
    (after the killed task, or after the activity's last attempt closed), whether or not the
    kill missed."""
    if aim.kind == LOCAL:
        return _first(events, _task_started_after(aim.task_started)) is not None
    scheduled = _first(
        events,
        lambda e: (
            e.event_type == E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
            and e.activity_task_scheduled_event_attributes.activity_id == aim.activity_id
        ),
    )
    closed = scheduled and _first(events, lambda e: _closes(e, scheduled))
    return bool(closed and _first(events, _task_started_after(closed.event_id)))


def sticky_timeouts(events: Sequence[HistoryEvent]) -> list[float]:
    """Seconds each workflow task waited on a sticky queue before it timed out there."""
    scheduled = {
        e.event_id: e for e in events if e.event_type == E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
    }
    waits = []
    for event in events:
        attributes = event.workflow_task_timed_out_event_attributes
        if (
            event.event_type == E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT
            and attributes.timeout_type == TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START
            and attributes.scheduled_event_id in scheduled
        ):
            waits.append(_seconds(event) - _seconds(scheduled[attributes.scheduled_event_id]))
    return waits


def _closes(event: HistoryEvent, scheduled: HistoryEvent) -> bool:
    """Whether `event` ends the activity `scheduled` (completed, failed, timed out, cancelled)."""
    ends = {
        E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
        E.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
        E.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
        E.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "activity_task_canceled_event_attributes",
    }
    field = ends.get(event.event_type)
    return field is not None and getattr(event, field).scheduled_event_id == scheduled.event_id


def _task_started_after(event_id: int) -> Callable[[HistoryEvent], bool]:
    return lambda e: e.event_id > event_id and e.event_type == E.EVENT_TYPE_WORKFLOW_TASK_STARTED


def _first(
    events: Sequence[HistoryEvent], match: Callable[[HistoryEvent], bool]
) -> HistoryEvent | None:
    return next((event for event in events if match(event)), None)


def _seconds(event: HistoryEvent) -> float:
    return event.event_time.ToMicroseconds() / 1_000_000

"""bench.recovery: the dead time an aimed kill cost its run, read from the run's history."""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import EventType, TimeoutType
from temporalio.api.history.v1 import HistoryEvent

from bench.recovery import LOCAL, Aim, dead_time, settled, sticky_timeouts

E = EventType
KILLED_AT = 1_000.0  # epoch seconds; events are placed relative to it


def _history(*events: tuple[float, int, str, dict[str, Any]]) -> list[HistoryEvent]:
    """Events numbered from 1: (seconds after the kill, type, attributes field, attributes)."""
    built = []
    for number, (after, kind, field, attributes) in enumerate(events, start=1):
        event = HistoryEvent(event_id=number, event_type=kind)  # type: ignore[arg-type]
        event.event_time.FromMicroseconds(int((KILLED_AT + after) * 1_000_000))
        if field:
            getattr(event, field).MergeFrom(type(getattr(event, field))(**attributes))
        built.append(event)
    return built


def _killed_decide(sticky_wait: float) -> list[HistoryEvent]:
    return _history(
        (-1.0, E.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, "activity_task_scheduled_event_attributes",
         {"activity_id": "4"}),
        (8.5, E.EVENT_TYPE_ACTIVITY_TASK_STARTED, "activity_task_started_event_attributes",
         {"scheduled_event_id": 1, "attempt": 2}),
        (10.0, E.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, "activity_task_completed_event_attributes",
         {"scheduled_event_id": 1}),
        (10.0, E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, "", {}),
        (10.0 + sticky_wait, E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
         "workflow_task_timed_out_event_attributes",
         {"scheduled_event_id": 4, "timeout_type": TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START}),
        (10.0 + sticky_wait, E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, "", {}),
        (10.1 + sticky_wait, E.EVENT_TYPE_WORKFLOW_TASK_STARTED, "", {}),
    )  # fmt: skip


def test_a_killed_activity_costs_the_wait_for_its_retry_and_the_sticky_wait_not_its_work() -> None:
    aim = Aim(pid=1, run_id="r", kind="decide", activity_id="4", attempt=1)

    for sticky_wait in (1.0, 10.0):
        waited = dead_time(_killed_decide(sticky_wait), aim, KILLED_AT)
        # 8.5 s until the retry started, not the 1.5 s it worked, then the sticky wait and 0.1 s
        assert waited is not None and round(waited, 3) == 8.5 + sticky_wait + 0.1
        assert sticky_timeouts(_killed_decide(sticky_wait)) == [sticky_wait]
    assert settled(_killed_decide(1.0), aim)
    assert not settled(_killed_decide(1.0)[:-1], aim)  # the run's next task has not started


def test_a_kill_that_landed_after_the_attempt_ended_is_missed() -> None:
    aim = Aim(pid=1, run_id="r", kind="decide", activity_id="4", attempt=2)  # the last attempt

    assert dead_time(_killed_decide(1.0), aim, KILLED_AT) is None


def test_a_killed_workflow_task_costs_the_wait_until_it_starts_again() -> None:
    events = _history(
        (-0.5, E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, "", {}),
        (-0.2, E.EVENT_TYPE_WORKFLOW_TASK_STARTED, "", {}),
        (9.8, E.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, "workflow_task_timed_out_event_attributes",
         {"scheduled_event_id": 1, "started_event_id": 2,
          "timeout_type": TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE}),
        (9.8, E.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, "", {}),
        (10.3, E.EVENT_TYPE_WORKFLOW_TASK_STARTED, "", {}),
    )  # fmt: skip

    waited = dead_time(events, Aim(pid=1, run_id="r", kind=LOCAL, task_started=2), KILLED_AT)
    assert waited is not None and round(waited, 3) == 10.3
    assert dead_time(events, Aim(pid=1, run_id="r", kind=LOCAL, task_started=5), KILLED_AT) is None
    assert sticky_timeouts(events) == []  # a task that timed out running is no sticky wait
    assert settled(events, Aim(pid=1, run_id="r", kind=LOCAL, task_started=2))
    assert not settled(events[:-1], Aim(pid=1, run_id="r", kind=LOCAL, task_started=2))

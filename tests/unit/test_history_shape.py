"""bench.history_shape: workflow tasks and events per step, read from a history's events."""

from __future__ import annotations

import json

from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import (
    ActivityTaskScheduledEventAttributes,
    HistoryEvent,
    MarkerRecordedEventAttributes,
)

from bench.history_shape import shape


def _task() -> HistoryEvent:
    return HistoryEvent(event_type=EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)


def _scheduled(name: str) -> HistoryEvent:
    attributes = ActivityTaskScheduledEventAttributes()
    attributes.activity_type.name = name
    return HistoryEvent(
        event_type=EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
        activity_task_scheduled_event_attributes=attributes,
    )


def _local(name: str) -> HistoryEvent:
    data = Payload(data=json.dumps({"seq": 1, "activity_type": name}).encode())
    attributes = MarkerRecordedEventAttributes(marker_name="core_local_activity")
    attributes.details["data"].CopyFrom(Payloads(payloads=[data]))
    return HistoryEvent(
        event_type=EventType.EVENT_TYPE_MARKER_RECORDED,
        marker_recorded_event_attributes=attributes,
    )


def _other() -> HistoryEvent:
    return HistoryEvent(event_type=EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)


def test_a_step_that_waits_on_a_page_read_takes_two_tasks_and_names_it() -> None:
    events = [
        _other(),  # started
        _task(), _local("start_run"), _scheduled("decide"), _other(),  # the run's first task
        _task(), _local("search_web"), _local("record_step"), _scheduled("decide"), _other(),
        _task(), _scheduled("read_page"), _other(),
        _task(), _local("record_step"), _scheduled("decide"), _other(),
        _task(), _local("record_evidence"), _local("record_step"), _local("save_report"),
    ]  # fmt: skip

    found = shape(events)

    assert (found.steps, found.events, found.workflow_tasks) == (3, 21, 5)
    assert found.tasks_by_step == [1, 2, 1]
    assert found.extra_by_activity == {"read_page": 1}
    assert found.tasks_per_step == 5 / 3
    assert found.describe() == (
        "1.67 tasks, 7.0 events a step; 1 of 3 steps took 2 tasks (read_page 1)"
    )


def test_steps_decided_in_the_worker_share_a_task() -> None:
    events = [
        _other(), _task(), _local("start_run"),
        _local("decide"), _local("search_web"), _local("record_step"),
        _local("decide"), _scheduled("read_page"), _other(),
        _task(), _local("record_step"),
        _local("decide"), _local("record_step"), _local("save_report"),
    ]  # fmt: skip

    found = shape(events)

    assert found.tasks_by_step == [0, 1, 0]
    assert found.extra_by_activity == {}
    assert found.describe() == "0.67 tasks, 4.7 events a step; no step took more than one task"


def test_a_marker_of_no_local_activity_is_no_step() -> None:
    attributes = MarkerRecordedEventAttributes(marker_name="core_patch")
    patch = HistoryEvent(
        event_type=EventType.EVENT_TYPE_MARKER_RECORDED, marker_recorded_event_attributes=attributes
    )

    found = shape([_task(), patch, _local("record_step")])

    assert (found.steps, found.tasks_by_step) == (1, [0])


def _summarised(event: HistoryEvent, *lines: str) -> HistoryEvent:
    event.user_metadata.summary.CopyFrom(Payload(data=json.dumps("\n".join(lines)).encode()))
    return event


def _decide_carrying(*steps: int) -> HistoryEvent:
    event = _scheduled("decide")
    records = [{"scope": {"step": step}, "tool": "search_web"} for step in steps]
    payload = Payload(data=json.dumps({"records": records}).encode())
    event.activity_task_scheduled_event_attributes.input.CopyFrom(Payloads(payloads=[payload]))
    return event


def test_a_step_ends_with_the_activity_that_records_it_and_counts_once() -> None:
    """Since the step's row goes with the next decide (or the save): its input's records, or its
    summary's lines when local; a step carried again (a decide that failed) ends once."""
    events = [
        _other(),
        _task(), _local("start_run"), _scheduled("decide"), _other(),
        _task(), _local("search_web"), _decide_carrying(1), _other(),
        _task(), _scheduled("read_page"), _other(),
        _task(), _decide_carrying(2), _other(),  # failed: the save carries step 2 again
        _task(), _summarised(_local("save_report"), "save report: failed", "step 2: read_page"),
    ]  # fmt: skip

    found = shape(events)

    assert (found.steps, found.tasks_by_step) == (2, [1, 2])
    assert found.extra_by_activity == {"read_page": 1}

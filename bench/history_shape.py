"""What a run's steps cost Temporal, read from its history: events and workflow tasks per step.

A step ends with its record: its `record_step` (a local activity: a marker in the history), or,
since the step record went with the next decide, that decide (its scheduled event, or its marker
when the decide is local) or the report's save. The workflow tasks of a step are those completed
after the previous step's record and up to its own; a step that
waited on a regular activity (a model, a page read, the verifier) needed a task to schedule it and
another to take its result. The run's first task (start_run, the first decide) and its last (the
report saved) count toward the run, not a step. Figures only.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

from workflows.contracts import read_step_line

LOCAL_ACTIVITY_MARKER = "core_local_activity"
RECORD_STEP = "record_step"
DECIDE = "decide"  # a regular activity when a real model decides: the one wait a step needs
SAVE_REPORT = "save_report"


@dataclass(frozen=True)
class Shape:
    steps: int  # steps recorded
    events: int
    workflow_tasks: int  # WorkflowTaskCompleted, the whole run
    # Workflow tasks completed inside each step (from the one after the previous record_step).
    tasks_by_step: list[int] = field(default_factory=list)
    # Regular activities scheduled in steps that took more than one task, by activity type.
    extra_by_activity: dict[str, int] = field(default_factory=dict)

    @property
    def events_per_step(self) -> float:
        return self.events / max(self.steps, 1)

    @property
    def tasks_per_step(self) -> float:
        return self.workflow_tasks / max(self.steps, 1)

    def describe(self) -> str:
        """`1.38 tasks, 10.1 events a step; 4 of 13 steps took 2 tasks (read_page 4)`."""
        over = [n for n in self.tasks_by_step if n > 1]
        text = f"{self.tasks_per_step:.2f} tasks, {self.events_per_step:.1f} events a step"
        if not over:
            return f"{text}; no step took more than one task"
        causes = ", ".join(f"{name} {count}" for name, count in self.extra_by_activity.items())
        return f"{text}; {len(over)} of {self.steps} steps took {max(over)} tasks ({causes})"


def shape(events: list[HistoryEvent]) -> Shape:
    tasks_by_step: list[int] = []
    extra: Counter[str] = Counter()
    tasks, scheduled = 0, []  # since the previous step's record
    seen: set[int | None] = set()  # steps counted: a step carried again (a decide that failed,
    for event in events:  # then the save) ends once; one without a number (None) each time
        steps = _recorded(event)
        recorded = len([step for step in steps if step is None or step not in seen])
        seen.update(steps)
        if recorded:
            if tasks_by_step or tasks:  # the first step's tasks include the run's first one
                tasks_by_step += [tasks] + [0] * (recorded - 1)  # a turn's steps share its tasks
                if tasks > 1:  # the step's own regular activities, beside the model's turn
                    extra.update(name for name in scheduled if name != DECIDE)
            tasks, scheduled = 0, []
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
            tasks += 1
        elif event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            scheduled.append(event.activity_task_scheduled_event_attributes.activity_type.name)
    if tasks_by_step:
        tasks_by_step[0] -= 1  # the run's first task (start_run) is not the first step's
    completed = sum(
        1 for e in events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    )
    return Shape(len(tasks_by_step), len(events), completed, tasks_by_step, dict(extra))


def _recorded(event: HistoryEvent) -> list[int | None]:
    """The steps whose records the event carries: a `record_step` marker its own; a decide (its
    scheduled input, or its marker's summary, a line per step) or the report's save those of
    the steps since the decide before."""
    if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        attributes = event.activity_task_scheduled_event_attributes
        if attributes.activity_type.name != DECIDE or not attributes.input.payloads:
            return []
        request: object = json.loads(attributes.input.payloads[0].data)
        records = request.get("records") if isinstance(request, dict) else None
        return [int(record["scope"]["step"]) for record in records or []]
    kind = _local_activity(event)
    if kind not in (RECORD_STEP, DECIDE, SAVE_REPORT):
        return []
    summary: object = (
        json.loads(event.user_metadata.summary.data or b'""')
        if event.user_metadata.HasField("summary")
        else ""
    )
    lines = summary.split("\n") if isinstance(summary, str) else []
    steps: list[int | None] = [read[0] for line in lines if (read := read_step_line(line))]
    return steps or ([None] if kind == RECORD_STEP else [])  # unsummarised: a step all the same


def _local_activity(event: HistoryEvent) -> str:
    """The activity type of a local activity's marker ("" for any other event)."""
    if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
        return ""
    attributes = event.marker_recorded_event_attributes
    if attributes.marker_name != LOCAL_ACTIVITY_MARKER or "data" not in attributes.details:
        return ""
    payloads = attributes.details["data"].payloads
    if not payloads:
        return ""
    data: object = json.loads(payloads[0].data)
    return str(data.get("activity_type", "")) if isinstance(data, dict) else ""

"""Workflow histories: fetched from Temporal or read from a JSON file (`temporal workflow show
--output json`), and the facts in one that `research audit` holds against the ledger (pure)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError
from temporalio.api.common.v1 import Payload, Payloads
from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client, WorkflowHistory
from temporalio.service import RPCError, RPCStatusCode

from runtime.settings import Settings
from runtime.temporal import connect
from starter.errors import EXIT_USAGE, CliError, no_such_run
from workflows import contracts
from workflows.models import RunResult

MAX_HISTORY_BYTES = 100_000_000  # Temporal refuses histories past 50 MB; JSON is larger
# Executions followed back from the latest (a 1,000-step run continues as new about 10 times).
MAX_EXECUTIONS = 1_000


async def fetch_history(settings: Settings, run_id: str) -> WorkflowHistory:
    """The run's history from the Temporal server (its latest execution under this id)."""
    return (await fetch_histories(settings, run_id))[-1]


async def fetch_histories(settings: Settings, run_id: str) -> list[WorkflowHistory]:
    """Every execution of the run, oldest first (`history_chain`)."""
    client = await connect(settings)
    try:
        return await history_chain(client, run_id)
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            raise no_such_run(run_id) from None
        raise


async def history_chain(client: Client, run_id: str) -> list[WorkflowHistory]:
    """The histories of the run's executions, oldest first: the latest execution under this id
    and each one it continued from (continue-as-new, `workflows.continuation`), followed back
    through the started event's continued run id. A run that never continued has one."""
    histories = [await client.get_workflow_handle(run_id).fetch_history()]
    while len(histories) < MAX_EXECUTIONS:
        before = continued_from(histories[0])
        if not before:
            break
        earlier = client.get_workflow_handle(run_id, run_id=before)
        histories.insert(0, await earlier.fetch_history())
    return histories


def continued_from(history: WorkflowHistory) -> str:
    """The execution this history's execution continued as new from ("" when none)."""
    if not history.events:
        return ""
    started = history.events[0].workflow_execution_started_event_attributes
    return started.continued_execution_run_id


def read_history_file(path: Path) -> WorkflowHistory:
    """A history exported as JSON, or CliError (exit 2) saying in one sentence what is wrong."""
    try:
        size = path.stat().st_size
        if size > MAX_HISTORY_BYTES:
            raise CliError(
                f"history {path}: is {size:,} bytes, above the limit of {MAX_HISTORY_BYTES:,}",
                EXIT_USAGE,
            )
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"history {path}: no such file", EXIT_USAGE) from None
    except IsADirectoryError:
        raise CliError(f"history {path}: is a directory, not a JSON file", EXIT_USAGE) from None
    except UnicodeDecodeError:
        raise CliError(f"history {path}: is not UTF-8 text", EXIT_USAGE) from None
    try:
        data = json.loads(text)
        history = WorkflowHistory.from_json(path.stem, data)
    except (ValueError, TypeError, AttributeError):
        raise CliError(
            f"history {path}: not a workflow history (export one with "
            "`temporal workflow show --workflow-id ID --output json`)",
            EXIT_USAGE,
        ) from None
    if not history.events:
        raise CliError(f"history {path}: holds no events", EXIT_USAGE)
    started = history.events[0].workflow_execution_started_event_attributes.workflow_id
    return WorkflowHistory(started, history.events) if started else history


# ---------------------------------------------------------------- the facts in a history


class ActivityFact(BaseModel):
    """One activity the workflow ran, in the order it was scheduled (or, if local, recorded)."""

    type: str
    summary: str = ""
    local: bool = False
    input: Any = None  # regular activities only: a local activity's input is not in history
    result: Any = None  # None when it failed, timed out or was cancelled
    completed: bool = False


class UpdateFact(BaseModel):
    name: str
    input: Any = None
    result: Any = None  # None when the update was rejected or failed


class HistoryFacts(BaseModel):
    workflow_id: str
    execution_id: str = ""
    workflow_type: str = ""
    brief: Any = None  # the workflow input as recorded
    events: int = 0
    executions: int = 1  # the executions read (a run that continued as new has several)
    activities: list[ActivityFact] = Field(default_factory=list)
    signals: list[tuple[str, Any]] = Field(default_factory=list)
    updates: list[UpdateFact] = Field(default_factory=list)
    closed: str = "running"  # completed, failed, canceled, terminated, timed_out, ...
    result: RunResult | None = None
    failure: str = ""

    def of_type(self, name: str) -> list[ActivityFact]:
        return [fact for fact in self.activities if fact.type == name]

    def recorded_steps(self) -> list[tuple[int, str] | None]:
        """(step, tool) of each step the workflow recorded, in order (None: unreadable; the tool
        on one line, as `contracts.step_line` writes it): a `record_step` one, a completed decide
        or report save the steps since the decide before (builds before that recorded every step
        with its own `record_step`). A step a decide carried and a later `record_step` or save
        carried again (that decide abandoned at the deadline, yet completed) counts once: the
        ledger wrote it once; a step two decides carried counts twice."""
        steps: list[tuple[int, str] | None] = []
        decided: set[tuple[int, str]] = set()
        for fact in self.activities:
            if not fact.completed or fact.type not in _RECORDING:
                continue
            carried = _steps_of(fact)
            if fact.type == contracts.DECIDE:
                decided.update(step for step in carried if step is not None)
            else:
                carried = [step for step in carried if step is None or step not in decided]
            steps += carried
        return steps


# The activities that record steps.
_RECORDING = frozenset({contracts.RECORD_STEP, contracts.DECIDE, contracts.SAVE_REPORT})


def _steps_of(fact: ActivityFact) -> list[tuple[int, str] | None]:
    """The steps one activity recorded: from a regular activity's input, else from the local
    activity's summary (`record_step`'s is "step N: tool"; a decide's or a save's has such a
    line per step after its first)."""
    if fact.type == contracts.RECORD_STEP:
        return [_step_of(fact.input, fact.summary)]
    if isinstance(fact.input, dict):
        return [_step_of(record, "") for record in fact.input.get("records") or []]
    return [_step_of(None, line) for line in fact.summary.split("\n")[1:]]


def _step_of(request: Any, summary: str) -> tuple[int, str] | None:
    """(step, tool) from a regular activity's input, else from the local activity's summary."""
    if isinstance(request, dict):  # its scope holds the step (recorded before: the input)
        scope = request.get("scope")
        step = scope.get("step") if isinstance(scope, dict) else request.get("step")
        if step is not None:
            return int(step), contracts.one_line(str(request.get("tool", "")))
    return contracts.read_step_line(summary)


_CLOSED = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED: "completed",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED: "failed",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED: "canceled",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED: "terminated",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT: "timed_out",
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW: "continued_as_new",
}
_ACTIVITY_ENDS = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "activity_task_completed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "activity_task_failed_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "activity_task_timed_out_event_attributes",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "activity_task_canceled_event_attributes",
}


def history_facts(history: WorkflowHistory | list[WorkflowHistory]) -> HistoryFacts:
    """What the history records, decoded from its JSON payloads (never by running code). Given
    the histories of a run that continued as new (oldest first), their facts as one: the first
    execution's input (the brief), every activity, signal and update in order, the last
    execution's id and outcome."""
    histories = history if isinstance(history, list) else [history]
    facts = HistoryFacts(
        workflow_id=histories[0].workflow_id, events=sum(len(h.events) for h in histories)
    )
    for number, one in enumerate(histories):
        scheduled: dict[int, ActivityFact] = {}
        accepted: dict[int, UpdateFact] = {}
        brief = facts.brief
        for event in one.events:
            _read_event(event, facts, scheduled, accepted)
        if number:  # a continued execution's input is the brief and what it carries
            facts.brief = brief
    facts.executions = len(histories)
    return facts


def _read_event(
    event: HistoryEvent,
    facts: HistoryFacts,
    scheduled: dict[int, ActivityFact],
    accepted: dict[int, UpdateFact],
) -> None:
    kind = event.event_type
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
        _read_start(event, facts)
    elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
        attributes = event.activity_task_scheduled_event_attributes
        fact = ActivityFact(
            type=attributes.activity_type.name,
            summary=_summary(event),
            input=_first(attributes.input),
        )
        scheduled[event.event_id] = fact
        facts.activities.append(fact)
    elif kind in _ACTIVITY_ENDS:
        _read_activity_end(event, kind, scheduled)
    elif kind == EventType.EVENT_TYPE_MARKER_RECORDED:
        _read_marker(event, facts)
    elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
        signal = event.workflow_execution_signaled_event_attributes
        facts.signals.append((signal.signal_name, _first(signal.input)))
    elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        request = event.workflow_execution_update_accepted_event_attributes.accepted_request
        update = UpdateFact(name=request.input.name, input=_first(request.input.args))
        accepted[event.event_id] = update
        facts.updates.append(update)
    elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED:
        done = event.workflow_execution_update_completed_event_attributes
        if done.accepted_event_id in accepted and done.outcome.HasField("success"):
            accepted[done.accepted_event_id].result = _first(done.outcome.success)
    elif kind in _CLOSED:
        _read_close(event, kind, facts)
    elif kind == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED:
        failed = event.workflow_task_failed_event_attributes
        if failed.cause == WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW:
            facts.execution_id = failed.new_run_id  # a reset: this history is the new execution


def _read_start(event: HistoryEvent, facts: HistoryFacts) -> None:
    started = event.workflow_execution_started_event_attributes
    facts.workflow_type = started.workflow_type.name
    facts.execution_id = started.original_execution_run_id
    facts.brief = _first(started.input)
    if started.workflow_id:
        facts.workflow_id = started.workflow_id


def _read_activity_end(
    event: HistoryEvent, kind: EventType.ValueType, scheduled: dict[int, ActivityFact]
) -> None:
    attributes = getattr(event, _ACTIVITY_ENDS[kind])
    fact = scheduled.get(attributes.scheduled_event_id)
    if fact is not None and kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        fact.result, fact.completed = _first(attributes.result), True


def _read_marker(event: HistoryEvent, facts: HistoryFacts) -> None:
    marker = event.marker_recorded_event_attributes
    if marker.marker_name != "core_local_activity":
        return
    data = _first(marker.details["data"]) if "data" in marker.details else None
    completed = "result" in marker.details and not marker.HasField("failure")
    facts.activities.append(
        ActivityFact(
            type=str((data or {}).get("activity_type", "")),
            summary=_summary(event),
            local=True,
            result=_first(marker.details["result"]) if completed else None,
            completed=completed,
        )
    )


def _read_close(event: HistoryEvent, kind: EventType.ValueType, facts: HistoryFacts) -> None:
    facts.closed = _CLOSED[kind]
    if kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
        result = _first(event.workflow_execution_completed_event_attributes.result)
        try:
            facts.result = RunResult.model_validate(result)
        except ValidationError:
            facts.failure = "the recorded result is not a run result"
    elif kind == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
        facts.failure = event.workflow_execution_failed_event_attributes.failure.message


def _summary(event: HistoryEvent) -> str:
    if not event.HasField("user_metadata") or not event.user_metadata.HasField("summary"):
        return ""
    value = _decode(event.user_metadata.summary)
    return value if isinstance(value, str) else ""


def _first(payloads: Payloads) -> Any:
    return _decode(payloads.payloads[0]) if payloads.payloads else None


def _decode(payload: Payload) -> Any:
    try:
        return json.loads(payload.data) if payload.data else None
    except ValueError:
        return None

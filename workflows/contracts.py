"""The loop's own activities (start_run, decide, record_step, save_report): one input model and one
result model each, what crosses the workflow/activity line. A tool's activity is the tool's
(`workflows.tools`), the verifier's is `workflows.verification`'s.

Every input carries its run scope (`workflows.scope.RunScope`: run, execution, step, turn, fork
point). Secrets never appear here: activities read them from the worker's settings.
"""

from __future__ import annotations

import re
from datetime import timedelta

from pydantic import BaseModel, Field

from workflows.activity import Activity
from workflows.cleaning import MAX_ERROR_CHARS, clean
from workflows.models import (
    Brief,
    Budget,
    Counters,
    Decision,
    Digest,
    RefusedSeed,
    Report,
    RunStatus,
    StopReason,
)
from workflows.scope import RunScope
from workflows.transcript import ToolResult, TranscriptEntry
from workflows.verification import Verification, VerifierMode

# Activity names, registered by worker.py and called by the workflow.
START_RUN = "start_run"
DECIDE = "decide"
RECORD_STEP = "record_step"
SAVE_REPORT = "save_report"


class StartRunInput(BaseModel):
    scope: RunScope  # its execution: the Temporal run id (a reused workflow id shares no rows)
    brief: Brief
    started_at: str  # ISO 8601, from workflow.now()
    # Temporal's first run id of the workflow, kept across resets: a reset to the start is told
    # from a new workflow reusing the id by it.
    first_execution_id: str = ""


class StartRunResult(BaseModel):
    created: bool = True
    # Whether the namespace has ResearchStatus / ResearchStopReason registered (worker setting):
    # recorded in history, so replay makes the same upserts.
    search_attributes: bool = False
    # What this worker serves without the network (the local corpus search): those activities
    # run as local activities. Recorded, so replay decides the same.
    local_search: bool = False
    local_model: bool = False  # the model is a deterministic policy inside the worker (offline)
    # The brief's hosts this worker serves from disk (the corpus): a page read of one, like a read
    # of a stored source, needs no network and runs as a local activity. Recorded ([]: a worker
    # before it, every page read a regular activity).
    local_hosts: list[str] = Field(default_factory=list)
    # The worker's RESEARCH_MODEL_TIMEOUT_SECONDS: decide's timeout follows from it (0: recorded
    # by a worker before it, decide keeps the old fixed timeout).
    model_timeout_seconds: float = 0.0
    execution_id: str = ""  # the execution the ledger wrote the run's rows under
    # How this worker checks meaning once the gate passes (`workflows.verification`), recorded
    # so replay decides the same: "" (a run started before the verifier) never asks one.
    verifier: VerifierMode = ""
    verifier_name: str = ""  # "openai gpt-4o-mini", for the report
    # Steps an execution takes before the run continues as new (`workflows.continuation`); 0, as
    # recorded before continue-as-new existed: the run never does.
    continue_after_steps: int = 0
    # The lane the run starts in (`workflows.lanes`): "auto" (the fixed lane, escalating to the
    # agent), "fixed" (the fixed lane alone) or "agent"; "" as recorded before lanes: the agent.
    lane: str = ""


class StepRecord(BaseModel):
    scope: RunScope  # its step and the model turn that asked for it
    tool: str
    arguments: str
    ok: bool
    error: str | None = None
    insufficient: bool = False
    summary: str = ""
    # The step as the model will be shown it (lean loop: the decide activity reads it back).
    entry: TranscriptEntry | None = None

    @classmethod
    def of(cls, scope: RunScope, entry: TranscriptEntry, summary: str) -> StepRecord:
        """A step's row: its call as kept, its result's outcome, and its line for progress."""
        call, result = entry.call, entry.result
        return cls(
            scope=scope,
            tool=call.name,
            arguments=call.arguments,
            ok=result.ok,
            error=step_error(result),
            insufficient=result.insufficient,
            summary=summary,
            entry=entry,
        )


def step_error(result: ToolResult) -> str | None:
    """The ledger's step error: the tool's, with what its result adds (a failed finish's gaps)."""
    detail = None if result.data is None else result.data.error_detail()
    if result.error is None or detail is None:
        return result.error
    return clean(f"{result.error}: {detail}", 4 * MAX_ERROR_CHARS)


def step_line(step: int, tool: str) -> str:
    """How an activity's summary names a step it records, one line each (`research audit` reads
    them back): "step 4: read_page"."""
    return f"step {step}: {one_line(tool)}"


def one_line(tool: str) -> str:
    """A tool's name (a model's: anything) without line breaks, as step lines write it."""
    return tool.replace("\r", "\\r").replace("\n", "\\n")


def with_records(summary: str, records: list[StepRecord]) -> str:
    """An activity's summary, with a line per step it records ("step N: tool", as `record_step`
    is summarised: the audit reads them from a local activity's marker)."""
    return "\n".join([summary, *(step_line(r.scope.step, r.tool) for r in records)])


def rows_before(records: list[StepRecord]) -> int | None:
    """The last step with its row written when `records` go with an activity (None: all)."""
    return records[0].scope.step - 1 if records else None


_STEP_LINE = re.compile(r"^step (\d+): (.*)$", re.DOTALL)


def read_step_line(line: str) -> tuple[int, str] | None:
    """(step, tool) of a step line (`step_line`; an older build's `record_step` summary may hold
    the tool's line breaks as written), None for any other line."""
    found = _STEP_LINE.match(line)
    return (int(found.group(1)), one_line(found.group(2))) if found else None


class DecideInput(BaseModel):
    scope: RunScope  # its turn: the 1-based model-call number, the ledger key of the call
    brief: Brief
    transcript: list[TranscriptEntry] = Field(default_factory=list)
    guidance: list[str] = Field(default_factory=list)
    seeds: list[str] = Field(default_factory=list)  # seed URLs the operator added while it ran
    # The brief's seed URLs the check at the start could not read (the brief message names them).
    unreadable_seeds: list[RefusedSeed] = Field(
        default_factory=list, exclude_if=lambda value: not value
    )
    budget: Budget = Field(default_factory=Budget)
    context_chars: int = 0  # size of the compacted transcript, for the ledger
    # Set (the last step recorded): `transcript` is empty and decide reads the steps up to it from
    # the ledger, compacts them to `context_budget` characters, and reports the size it built.
    watermark: int | None = None
    context_budget: int = 0
    turn_start: int = 0  # the latest turn's first step: its results are never shortened
    # Set by decide (never by the workflow) when compaction alone did not fit the context budget:
    # the oldest steps folded (`workflows.context.fold`); `transcript` holds the steps after them.
    digest: Digest | None = Field(default=None, exclude_if=lambda value: value is None)
    # The steps taken since the last decide, recorded by this one before it reads the transcript
    # (one activity fewer a step: `record_step` runs alone only for the loop's last steps and
    # before a continue-as-new).
    records: list[StepRecord] = Field(default_factory=list, exclude_if=lambda value: not value)
    # The fixed lane's one composing call (`workflows.lanes`): the passages read so far, the
    # compose_report schema and the fixed lane's model instead of the tools and the agent's.
    compose: bool = Field(default=False, exclude_if=lambda value: not value)


class RecordStepResult(BaseModel):
    inserted: bool = True
    execution_id: str = ""  # the execution the ledger wrote the step under


class SaveReportInput(BaseModel):
    scope: RunScope
    status: RunStatus
    stop_reason: StopReason
    report: Report
    counters: Counters
    finished_at: str
    verification: Verification = Field(default_factory=Verification)
    # The steps a failure or a cancel left unrecorded, recorded first (up to one the ledger
    # refuses: the run ended by another cause).
    records: list[StepRecord] = Field(default_factory=list, exclude_if=lambda value: not value)
    # The lanes the run entered, and why it escalated (`workflows.lanes`; empty before lanes).
    lanes: list[str] = Field(default_factory=list, exclude_if=lambda value: not value)
    escalation: str = Field(default="", exclude_if=lambda value: not value)


class SaveReportResult(BaseModel):
    saved: bool = True
    markdown: str = ""  # the report as stored (the Web UI shows it as the run's final details)


# ---------------------------------------------------------------- the loop's activities

START_RUN_ACTIVITY = Activity(START_RUN, StartRunInput, StartRunResult, "always", capped=False)
# A model call's attempt: the worker's RESEARCH_MODEL_TIMEOUT_SECONDS (recorded by start_run) plus
# the ledger work around the call (`workflows.calling`), so the activity cuts a slow call itself,
# once, and Temporal never asks a model again while it is still answering. Its own timeout fires a
# little after the deadline's timer, which the workflow races it against.
DECIDE_ACTIVITY = Activity(
    DECIDE,
    DecideInput,
    Decision,
    "when_model_is_local",
    heartbeat=True,
    timeout=timedelta(seconds=120),
    grace=timedelta(seconds=5),
    model_call=True,
)
RECORD_STEP_ACTIVITY = Activity(RECORD_STEP, StepRecord, RecordStepResult, "always")
SAVE_REPORT_ACTIVITY = Activity(
    SAVE_REPORT,
    SaveReportInput,
    SaveReportResult,
    "always",
    timeout=timedelta(seconds=30),
    capped=False,
)

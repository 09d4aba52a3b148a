"""The data contract shared by the workflow, the activities and the CLI (pure pydantic models)."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from workflows.hosts import allowed_host, host_allowed

TASK_QUEUE = "research"

Stance = Literal["supports", "contradicts"]
# How a run investigates (`workflows.lanes`): the fixed lane first, escalating to the agent on a
# signal (auto), the fixed lane alone, or the agent loop alone.
Lane = Literal["auto", "fixed", "agent"]

QUESTION_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$")
RUN_ID_CHARS = 1_000  # Temporal's default limit on a workflow id


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    INCOMPLETE = "incomplete"
    CANCELLED = "cancelled"
    FAILED = "failed"


class StopReason(StrEnum):
    COVERAGE_GATE_PASSED = "coverage_gate_passed"
    STEP_LIMIT = "step_limit"
    TOKEN_LIMIT = "token_limit"
    DEADLINE = "deadline"
    CONTEXT_LIMIT = "context_limit"
    FINISH_ATTEMPTS_EXHAUSTED = "finish_attempts_exhausted"
    CANCELLED = "cancelled"
    OPERATOR_FINISH = "operator_finish"
    PROVIDER_ERROR = "provider_error"
    INFRASTRUCTURE_ERROR = "infrastructure_error"


class Limits(BaseModel):
    """Hard bounds of one run. Defaults from DESIGN.md; the model can never raise them."""

    model_config = ConfigDict(extra="forbid", strict=True)

    max_steps: int = 20
    max_searches: int = 4
    max_page_fetches: int = 6
    max_tokens: int = 100_000
    deadline_seconds: int = 300
    max_finish_attempts: int = 3
    max_context_chars: int = 60_000
    min_sources: int = 2

    @model_validator(mode="after")
    def _within_ceilings(self) -> Limits:
        for name, value in self.model_dump().items():
            ceiling = LIMIT_CEILINGS[name]
            if value < 1:
                raise ValueError(f"limit {name} must be at least 1, got {value}")
            if value > ceiling:
                raise ValueError(f"limit {name} is {value}, above its ceiling of {ceiling}")
        return self


LIMIT_CEILINGS: dict[str, int] = {
    "max_steps": 1_000,  # a long run continues as new every STEPS_PER_EXECUTION steps
    "max_searches": 100,
    "max_page_fetches": 200,
    "max_tokens": 10_000_000,
    "deadline_seconds": 86_400,
    "max_finish_attempts": 20,
    "max_context_chars": 500_000,
    "min_sources": 20,
}
MIN_CONTEXT_CHARS = 2_000
# Every turn's request lands in the workflow history: the steps of one execution x context must
# stay well inside Temporal's history size limit. A run continues as new (a fresh history) after
# at most STEPS_PER_EXECUTION steps (`workflows.continuation`).
HISTORY_BUDGET_CHARS = 20_000_000
STEPS_PER_EXECUTION = 100
# Beyond the brief itself, the context bound must leave room for at least one tool result.
CONTEXT_RESERVE_CHARS = 1_000


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    text: str
    required: bool = True
    # Questions whose answer this one needs first: the fixed lane hands such a run to the agent
    # (left out of the JSON when empty, so a brief without it is what it always was).
    depends_on: list[str] = Field(default_factory=list, exclude_if=lambda value: not value)

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not QUESTION_ID.match(value):
            raise ValueError(
                f"question id {value!r} must start with a letter and use only letters, "
                "digits, - or _"
            )
        return value

    @field_validator("text")
    @classmethod
    def _text_present(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a sub-question has empty text")
        return value.strip()


class Brief(BaseModel):
    """What the user asks. With no `questions`, the question itself becomes required Q1."""

    model_config = ConfigDict(extra="forbid")

    question: str
    questions: list[Question] = Field(default_factory=list)
    allowed_hosts: list[str]
    seed_urls: list[str] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits)
    # `research rerun`: the run whose recorded model decisions this run's `decide` hands back
    # (the `replay` provider: no model is asked, whatever the worker's provider). Left out of the
    # JSON when unset, so every other brief (and its context budget) is what it always was.
    rerun_of: Annotated[str, Field(max_length=RUN_ID_CHARS)] | None = Field(
        default=None, exclude_if=lambda value: value is None
    )
    # The lane it runs in (`workflows.lanes`); unset: `auto` when the worker has a model, the
    # offline policy's own loop otherwise. Left out of the JSON when unset.
    lane: Lane | None = Field(default=None, exclude_if=lambda value: value is None)

    @field_validator("question")
    @classmethod
    def _question_present(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the brief's question is empty")
        return value.strip()

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts_valid(cls, hosts: list[str]) -> list[str]:
        if not hosts:
            raise ValueError("allowed_hosts is empty: name at least one host the run may read")
        return [allowed_host(host) for host in hosts]

    @model_validator(mode="after")
    def _consistent(self) -> Brief:
        if not self.questions:
            self.questions = [Question(id="Q1", text=self.question)]
        ids = [question.id for question in self.questions]
        duplicates = sorted({qid for qid in ids if ids.count(qid) > 1})
        if duplicates:
            raise ValueError(
                f"duplicate question id {duplicates[0]!r}: question ids must be unique"
            )
        if not any(question.required for question in self.questions):
            raise ValueError("at least one question must be required")
        for number, question in enumerate(self.questions):
            earlier = ids[:number]
            for first in question.depends_on:
                if first not in earlier:
                    raise ValueError(
                        f"question {question.id} depends on {first!r}, which is not a question "
                        "before it"
                    )
        for url in self.seed_urls:
            if not host_allowed(url, self.allowed_hosts):
                raise ValueError(f"seed URL {url!r} is not on an allowed host")
        if self.limits.max_context_chars < MIN_CONTEXT_CHARS:
            raise ValueError(f"limit max_context_chars must be at least {MIN_CONTEXT_CHARS}")
        per_execution = min(self.limits.max_steps, STEPS_PER_EXECUTION)
        if per_execution * self.limits.max_context_chars > HISTORY_BUDGET_CHARS:
            raise ValueError(
                f"limits max_steps (at most {STEPS_PER_EXECUTION} an execution) x "
                f"max_context_chars is above {HISTORY_BUDGET_CHARS:,}: lower one of them"
            )
        needed = len(self.model_dump_json()) + CONTEXT_RESERVE_CHARS
        ceiling = LIMIT_CEILINGS["max_context_chars"]
        if needed > ceiling:  # no limit can make room: only a shorter brief can
            raise ValueError(
                f"the brief is {needed - CONTEXT_RESERVE_CHARS:,} characters as JSON, too long "
                f"for any context (max_context_chars is at most {ceiling:,}): shorten its "
                "questions, hosts or seed URLs"
            )
        if self.limits.max_context_chars < needed:
            raise ValueError(
                f"the brief leaves no room in its context: raise limits.max_context_chars to "
                f"at least {needed}"
            )
        return self

    def question_ids(self) -> list[str]:
        return [question.id for question in self.questions]


# ---------------------------------------------------------------- budget and model turns


class Budget(BaseModel):
    steps_left: int = 0
    searches_left: int = 0
    pages_left: int = 0
    tokens_left: int = 0
    seconds_left: int = 0


class ToolCall(BaseModel):
    """One call as the model emitted it: the arguments stay raw until validated.

    Kept only cleaned and capped (`workflows.tools.bounded_call`); `oversized` is the length of
    arguments that were cut, so the call is refused rather than parsed from a fragment.
    """

    id: str = ""
    name: str = ""
    arguments: str = "{}"
    oversized: int = 0
    # Set by the host before the call reaches the workflow (a call that carried one of the
    # worker's secrets): the call is refused with this sentence and never run.
    refusal: str = ""


# One model turn may report at most this many tokens (input + output): the largest context
# windows are about a million tokens. Above it the report is clamped, and the turn says so.
MAX_REPORTED_TOKENS = 2_000_000


class Usage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0  # already inside output_tokens (completion_tokens), shown apart
    cached_input_tokens: int = 0  # inside input_tokens: served from the provider's prompt cache
    estimated: bool = False
    note: str = ""  # why the provider's report was not taken as it was (see `counted`)

    @property
    def total(self) -> int:
        return self.input_tokens + self.output_tokens

    def counted(self) -> int:
        """What a turn adds to the token bound: never negative, never above the ceiling."""
        total = max(0, self.input_tokens) + max(0, self.output_tokens)
        return min(total, MAX_REPORTED_TOKENS)


class Decision(BaseModel):
    """One model turn. No tool call at all is a malformed turn that still costs a step."""

    tool_calls: list[ToolCall] = Field(default_factory=list)
    text: str = ""
    usage: Usage = Field(default_factory=Usage)
    model: str = ""
    # The provider was allowed several calls this turn (RESEARCH_PARALLEL_TOOL_CALLS): they run in
    # order, a step each, and the bounds are checked before each. Otherwise several is malformed.
    parallel_tool_calls: bool = False
    # How many calls the model sent, when more than `tool_calls` keeps (0: as many as kept).
    tool_calls_sent: int = 0
    # A transcript read from the ledger (DecideInput.watermark): its compacted size, and whether
    # it did not fit the context budget (then no model was asked and there is no call).
    context_chars: int = 0
    over_context: bool = False
    # The execution the ledger recorded this turn under (set by decide; empty: none, or a
    # decide before this field): the workflow's writer from here on (`RunState.writer`).
    execution_id: str = ""


# ---------------------------------------------------------------- findings, and folded steps

MAX_ID_CHARS = 40  # question, source, passage and evidence ids


class Finding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Sizes are bounded by MAX_ARGUMENT_CHARS for what a model sends; the host composes these too.
    text: str = Field(min_length=1)
    evidence_ids: list[Annotated[str, Field(max_length=MAX_ID_CHARS)]] = Field(default_factory=list)


class FoldedSearch(BaseModel):
    """A query searched in the folded steps (once however often), and the result URLs it found
    that no folded step read."""

    query: str
    times: int = 1
    urls: list[str] = Field(default_factory=list)


class FoldedSource(BaseModel):
    """A source the folded steps read: read it again by `id` (no fetch is spent)."""

    id: str
    url: str
    title: str = ""


class FoldedEvidence(BaseModel):
    """Evidence recorded in the folded steps: cite it by `id` at finish."""

    id: str
    question_id: str
    source_id: str
    claim: str
    stance: Stance
    conflicts: list[str] = Field(default_factory=list)  # the host's, to disclose in the report


class FoldedRefusal(BaseModel):
    """A tool's latest refusal in the folded steps, when no later folded call of it succeeded."""

    step: int
    tool: str
    error: str
    gaps: list[str] = Field(default_factory=list)  # a refused finish: what the gate found missing


class Digest(BaseModel):
    """The oldest transcript entries folded into what the model still needs from them
    (`workflows.context.fold`): shown before the entries kept whole, only when compaction alone
    does not fit the context budget. The operator's guidance and seeds are never folded: every
    turn shows them after the transcript."""

    first_step: int
    last_step: int
    searches: list[FoldedSearch] = Field(default_factory=list)
    sources: list[FoldedSource] = Field(default_factory=list)
    evidence: list[FoldedEvidence] = Field(default_factory=list)
    refusals: list[FoldedRefusal] = Field(default_factory=list)


# ---------------------------------------------------------------- ledger-facing records


class Passage(BaseModel):
    id: str  # "S1.P4"
    start: int  # character offset in the snapshot
    end: int
    text: str
    section: str = ""


class SourceRef(BaseModel):
    """What the workflow knows of a stored source: never the body."""

    id: str
    url: str
    final_url: str = ""
    host: str = ""
    title: str = ""
    content_hash: str = ""
    passage_count: int = 0
    ok: bool = True
    error: str | None = None
    # Dates and versions the text read from this page states ("2023", "1.4"): the limitations
    # may name them when they describe the source (`workflows.gate`).
    names: list[str] = Field(default_factory=list)
    # Its text's sketch (`workflows.families`): another rendering of the same text is one source.
    sketch: list[int] = Field(default_factory=list)


class SearchHit(BaseModel):
    url: str
    title: str = ""
    snippet: str = ""
    host: str = ""
    also: list[str] = Field(default_factory=list)  # its near-duplicates, best first


class Evidence(BaseModel):
    id: str  # "E001"
    question_id: str
    source_id: str
    claim: str
    stance: Stance
    quote: str
    passage_id: str | None = None
    start: int = 0
    end: int = 0
    # The whole sentence(s) of the stored page the quote was cut from (the quote itself when it
    # is whole), and the section heading it sits under: what the verifier and the report show.
    sentence: str = ""
    section: str = ""
    # What the judgement rules doubted when it was recorded, left to the verifier at finish
    # (`workflows.rules`): with no verifier such doubts refuse the record instead.
    concerns: list[str] = Field(default_factory=list)


class Note(BaseModel):
    """What the model claimed when it recorded a quote: its note beside the quote, never a
    finding (no verifier judged it)."""

    evidence_id: str
    question_id: str
    claim: str


class Submitted(BaseModel):
    """The model's last submitted report, which was not accepted, and the gaps that stopped it."""

    answer: str
    findings: list[Finding] = Field(default_factory=list)
    limitations: str = ""
    gaps: list[str] = Field(default_factory=list)


class Report(BaseModel):
    answer: str
    findings: list[Finding] = Field(default_factory=list)
    limitations: str = ""
    open_questions: list[str] = Field(default_factory=list)
    composed: bool = False  # True when the host composed it (every end that is not completed)
    # A composed report that was not accepted: the evidence claims as the model's notes, and its
    # last submission, marked as not accepted (`workflows.composer.unaccepted`).
    notes: list[Note] = Field(default_factory=list)
    submitted: Submitted | None = None


class Counters(BaseModel):
    steps: int = 0
    searches: int = 0
    page_fetches: int = 0
    tokens: int = 0
    finish_attempts: int = 0
    model_calls: int = 0
    # Of `tokens`, those counted from the host's estimate because the provider's report was
    # missing, not whole numbers or far below what was sent (activities.model.usage).
    estimated_tokens: int = 0


class StepNote(BaseModel):
    step: int
    action: str


class Progress(BaseModel):
    run_id: str = ""
    status: RunStatus = RunStatus.RUNNING
    stop_reason: StopReason | None = None
    counters: Counters = Field(default_factory=Counters)
    limits: Limits = Field(default_factory=Limits)
    evidence_count: int = 0
    source_count: int = 0
    open_questions: list[str] = Field(default_factory=list)
    last_action: str = ""
    recent_steps: list[StepNote] = Field(default_factory=list)  # the last ones, oldest first
    seconds_left: int = 0
    message: str = ""  # why a run that could not start failed (its brief was invalid)
    lanes: list[str] = Field(default_factory=list)  # the lanes entered, in order
    escalation: str = ""  # why the run left the fixed lane ("": it did not)


class ResultQuote(BaseModel):
    """One piece of recorded evidence as the run's result shows it: the quote and its page."""

    id: str
    question_id: str
    stance: Stance
    quote: str
    url: str


# How a completed run no verifier model read is told, wherever its outcome is shown (the CLI's
# copy: starter.summary.UNVERIFIED).
UNVERIFIED = "rules only, meaning not checked"


class RunResult(BaseModel):
    run_id: str
    status: RunStatus
    stop_reason: StopReason
    counters: Counters
    evidence_count: int
    source_count: int
    independent_sources: int
    report: Report
    message: str = ""
    # A completed run: true when a verifier model checked its meaning (`verifier` names it), false
    # when the rules alone passed it; None for a run that did not complete (or ended before this).
    verified: bool | None = None
    verifier: str = ""
    # The recorded evidence with quotes and URLs, so the result reads on its own (the Web UI).
    quotes: list[ResultQuote] = Field(default_factory=list)
    lanes: list[str] = Field(default_factory=list)  # the lanes entered, in order
    escalation: str = ""  # why the run left the fixed lane ("": it did not)


# ---------------------------------------------------------------- steering (signals, update, query)


class GuidanceInput(BaseModel):
    text: str = Field(min_length=1, max_length=2_000)


class SeedUrlsInput(BaseModel):
    urls: list[str] = Field(min_length=1)


class RefusedSeed(BaseModel):
    url: str  # as sent, without any user name or password
    reason: str  # a clause after the URL: "is on evil.example, not an allowed host (...)"


class SeedsAdded(BaseModel):
    """What the `add_seeds` update did with each URL: `accepted` ones the model may now read
    (`known` were seeds already), `refused` ones with the reason."""

    accepted: list[str] = Field(default_factory=list)
    known: list[str] = Field(default_factory=list)
    refused: list[RefusedSeed] = Field(default_factory=list)


class FinishNowInput(BaseModel):
    reason: str = ""


class EscalateInput(BaseModel):
    """An operator's ask for deeper work: a run in the fixed lane continues as the agent."""

    reason: str = Field(default="", max_length=500)


class EscalateResult(BaseModel):
    """What the `escalate_run` update took: the reason kept, and what the run does (`message`)."""

    reason: str = ""
    message: str = ""


class ExtendLimitsInput(BaseModel):
    """New absolute values for some limits; each must be above the current value and its ceiling."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int | None = None
    max_searches: int | None = None
    max_page_fetches: int | None = None
    max_tokens: int | None = None
    deadline_seconds: int | None = None

"""What one tool declares (pure): a `ToolSpec` is the single place a tool is described.

Everything else is derived from the registered specs (`workflows.tools.registry`): the names and
JSON schemas offered to the model, argument validation, dispatch in the workflow, the step line
of progress displays, context compaction, the prompt's cut-down older results, the untrusted page
text block and the trace label. Every field is required: a tool says "none" explicitly.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from workflows.activity import Activity, In, Out
from workflows.ending import Outcome
from workflows.models import (
    Brief,
    Counters,
    Evidence,
    RefusedSeed,
    SearchHit,
    SourceRef,
    Submitted,
)
from workflows.scope import RunScope
from workflows.tool_base import ToolArgs, ToolData
from workflows.verification import VerifierMode, VerifyResult

A = TypeVar("A", bound=ToolArgs)
D = TypeVar("D", bound=ToolData)


@dataclass(frozen=True)
class Untrusted:
    """A result's page text: left out of the envelope's JSON (`field`) and shown to the model in
    an `<untrusted_page source=...>` block instead (no block when `body` is empty)."""

    field: str
    source: str
    body: str


@dataclass(frozen=True)
class Slimming(Generic[D]):
    """How the prompt shows an older result of the tool: `cut` down. A result is older when more
    than `keep_latest` newer results of the same tool follow it (None: never by count), or when it
    is more than `recent_steps` entries back. The latest turn's results are always whole."""

    cut: Callable[[D], D]
    keep_latest: int | None
    recent_steps: int


@dataclass(frozen=True)
class Executed:
    """What running a call came to: its result (`data`, or `ok` False and the `error` the model
    is told; `insufficient`: it found nothing to go on), and the run's end when it ended the run.
    The dispatcher puts it in the envelope the model is shown, with the budget left."""

    data: ToolData | None = None
    ok: bool = True
    error: str | None = None
    insufficient: bool = False
    outcome: Outcome | None = None


class ReadTarget(BaseModel):
    url: str
    source_id: str
    fetch: bool  # True: a network read of a new URL (counts against max_page_fetches)


class ToolState(Protocol):
    """What a tool may read and change of the run's state (`workflows.state.RunState` is it):
    its brief, counters, sources and evidence, and the bounds and checks on its arguments. A
    refused argument raises `InvalidCall`."""

    brief: Brief
    counters: Counters
    evidence: dict[str, Evidence]
    sources: dict[str, SourceRef]
    submitted: Submitted | None
    finish_reason: str
    unreadable_seeds: list[RefusedSeed]

    def take_search(self) -> bool: ...

    def discover(self, hits: list[SearchHit]) -> None: ...

    def read_target(self, url: str | None, source_id: str | None) -> ReadTarget: ...

    def take_fetch(self, target: ReadTarget) -> bool: ...

    def add_source(self, source_id: str, source: SourceRef, texts: list[str]) -> None: ...

    def check_evidence(self, question_id: str, source_id: str, passage_id: str | None) -> None: ...

    def next_evidence_id(self) -> str: ...

    def question_terms(self, question_id: str) -> list[str]: ...

    def question_text(self, question_id: str) -> str: ...

    def add_evidence(self, evidence_id: str, evidence: Evidence) -> None: ...

    def take_finish_attempt(self) -> int: ...

    def unread_urls(self) -> list[str]: ...


class ToolContext(Protocol):
    """What a tool's `run` may use: the run's state, the run scope of the step's activities, the
    workflow's activity caller, and how meaning is checked."""

    @property
    def state(self) -> ToolState: ...

    def scope(self) -> RunScope:
        """The scope of an activity for the current step (`RunScope.tool_of`)."""
        ...

    @property
    def verifier(self) -> VerifierMode:
        """How meaning is checked once the gate passes (start_run said so: recorded)."""
        ...

    @property
    def verifier_name(self) -> str: ...

    def verified(self, checked: VerifyResult) -> None:
        """Count the verifier's tokens against the run's budget and trace its verdicts."""
        ...

    def activity(self, activity: Activity[In, Out], request: In, *, summary: str) -> Awaitable[Out]:
        """Run an activity as its spec says (local or regular, heartbeat, timeouts)."""
        ...


@dataclass(frozen=True, kw_only=True)
class ToolSpec(Generic[A, D]):
    """One tool, whole. `run` raises `InvalidCall` for a call it refuses (one sentence)."""

    name: str  # what the model calls; also the label of its spans and metrics
    description: str  # sent every turn: short (the system prompt holds the rules)
    arguments: type[A]
    parameters: Mapping[str, str]  # every argument's description, as the model is shown it
    # Arguments that are page text, matched against a stored page as the page has it: kept as
    # sent, never made canonical (`workflows.canonical`) like the rest of the model's text.
    verbatim: frozenset[str]
    results: tuple[type[D], ...]  # each with its own `kind`
    # Its activity (where it runs, its heartbeat and timeouts are the activity's); None: it runs
    # inside the workflow, no activity.
    runs: Activity[Any, Any] | None
    run: Callable[[A, ToolContext], Awaitable[Executed]]
    describe: Callable[[A, D], str]  # the step's line in progress displays and the Web UI
    compact: Callable[[D], D | None] | None  # the result with its bulk dropped (None: no bulk)
    slimming: Slimming[D] | None  # how the prompt cuts an older result (None: always whole)
    untrusted: Callable[[D], Untrusted | None] | None  # its page text (None: it has none)
    # The source a call that succeeded rests on (record_evidence: the page its quote is from):
    # compaction drops that source's page text last (`workflows.context.compact`). None: none.
    rests_on: Callable[[A], str | None] | None
    label: str  # the trace label: `execute_tool {label}`


def first_line(text: str, note: str, chars: int = 60) -> str:
    """The first line of `text` (cut to about `chars`), with `note` in brackets after it."""
    line = text.strip().split("\n", 1)[0]
    shown = line if len(line) <= chars else line[:chars].rstrip() + " …"
    return f"{shown} [{note}]" if note else shown

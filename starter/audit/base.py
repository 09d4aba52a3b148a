"""What every audit check reads (`AuditData`: the ledger's rows and the history's facts) and how a
check is declared: a small pure function that yields one sentence per problem it finds."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from activities.ledger import RunRows
from activities.ledger.review import EvidenceRow, PassageRow, SourceRow, StepRow
from activities.ledger.sources import source_ref_from
from starter.history import HistoryFacts
from workflows.hosts import host_allowed
from workflows.models import Evidence, Limits, SourceRef, StopReason

# A run that ended while a model turn or a tool call was in flight (cancelled, out of time, a
# provider or a service that kept failing) may have counted a step, search, fetch or turn whose
# row was never written, or written a row (an answered turn, a stored page, a recorded quote) the
# workflow never saw: its last action is loose, by at most one of each.
LOOSE_LAST_TURN = frozenset(
    {
        StopReason.DEADLINE,
        StopReason.CANCELLED,
        StopReason.CONTEXT_LIMIT,
        StopReason.PROVIDER_ERROR,
        StopReason.INFRASTRUCTURE_ERROR,
        # finish_now abandons a model call in flight: its answer may still be written
        StopReason.OPERATOR_FINISH,
    }
)
_RECORD_SUMMARY = re.compile(r"^record (E\d+) for ")
_READ_SUMMARY = re.compile(r"^read (S\d+) ")


@dataclass(frozen=True)
class AuditData:
    """One run as the ledger holds it, and as its workflow history recorded it (None: unknown)."""

    rows: RunRows
    history: HistoryFacts | None = None

    @property
    def brief_hosts(self) -> list[str]:
        return self.rows.run.brief.allowed_hosts

    @cached_property
    def limits(self) -> Limits:
        """The brief's limits, raised by every `extend_limits` update the history accepted."""
        limits = self.rows.run.brief.limits
        for update in self.history.updates if self.history else []:
            if update.name == "extend_limits" and update.result is not None:
                limits = Limits.model_validate(update.result)
        return limits

    @cached_property
    def seeds(self) -> set[str]:
        """The brief's seed URLs, the signalled ones on allowed hosts (the workflow may have
        refused some: a superset) and those the `add_seeds` updates accepted."""
        seeds = set(self.rows.run.brief.seed_urls)
        for name, payload in self.history.signals if self.history else []:
            if name == "add_seed_urls" and isinstance(payload, dict):
                urls = payload.get("urls") or []
                seeds.update(
                    str(url).strip() for url in urls if host_allowed(str(url), self.brief_hosts)
                )
        for update in self.history.updates if self.history else []:
            if update.name == "add_seeds" and isinstance(update.result, dict):
                seeds.update(str(url) for url in update.result.get("accepted") or [])
        return seeds

    @property
    def loose_last_turn(self) -> bool:
        return self.rows.run.stop_reason in LOOSE_LAST_TURN

    def same_or_one_more(self, recorded: list[Any], ledger: list[Any]) -> bool:
        """`ledger` equals `recorded`, or, after a loose end, holds one row more at its end."""
        return ledger == recorded or (self.loose_last_turn and ledger[:-1] == recorded)

    def source(self, source_id: str) -> SourceRow | None:
        return next((s for s in self.rows.sources if s.source_id == source_id), None)

    def passages_of(self, source_id: str) -> list[PassageRow]:
        return [p for p in self.rows.passages if p.source_id == source_id]

    def evidence_models(self) -> dict[str, Evidence]:
        """The evidence as the workflow held it (`RunState.evidence`)."""
        return {row.id: Evidence.model_validate(row.model_dump()) for row in self.rows.evidence}

    def source_refs(self) -> dict[str, SourceRef]:
        """The sources as the workflow held them (`RunState.sources`): never the body."""
        return {
            row.source_id: source_ref(row, len(self.passages_of(row.source_id)))
            for row in self.rows.sources
        }

    def step_recording(self, evidence: EvidenceRow) -> StepRow | None:
        """The step that recorded this evidence (its summary names it)."""
        return next((s for s in self.rows.steps if _matches(_RECORD_SUMMARY, s, evidence.id)), None)

    def step_reading(self, source_id: str) -> StepRow | None:
        """The first step that read this source successfully."""
        return next((s for s in self.rows.steps if _matches(_READ_SUMMARY, s, source_id)), None)


def source_ref(row: SourceRow, passage_count: int) -> SourceRef:
    return source_ref_from(row.model_dump(), passage_count)


def _matches(pattern: re.Pattern[str], step: StepRow, wanted: str) -> bool:
    found = pattern.match(step.summary) if step.ok else None
    return found is not None and found.group(1) == wanted


Problems = Iterable[str]


@dataclass(frozen=True)
class Check:
    """One consistency check: a name for the table, what it guards, the function that checks."""

    name: str
    guards: str
    run: Callable[[AuditData], Problems]
    needs_history: bool = False


CHECKS: list[Check] = []


def check(
    name: str, guards: str, *, needs_history: bool = False
) -> Callable[[Callable[[AuditData], Problems]], Callable[[AuditData], Problems]]:
    """Register a check (in the order of the table)."""

    def register(function: Callable[[AuditData], Problems]) -> Callable[[AuditData], Problems]:
        if any(existing.name == name for existing in CHECKS):
            raise ValueError(f"audit check {name} is declared twice")
        CHECKS.append(Check(name, guards, function, needs_history))
        return function

    return register


def numbered(values: list[int], what: str) -> Iterator[str]:
    """Problems when `values` are not exactly 1, 2, ..., n."""
    expected = list(range(1, len(values) + 1))
    if values != expected:
        yield f"{what} are {_short(values)}, expected 1 to {len(values)} with no gap"


def _short(values: list[int]) -> str:
    shown = ", ".join(map(str, values[:12]))
    return shown + (", ..." if len(values) > 12 else "")

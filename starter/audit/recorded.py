"""Audit checks of the ledger against the workflow history: what the workflow recorded deciding
and receiving (activity results, its input and its result) is what the ledger holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from starter.audit.base import AuditData, check
from starter.history import HistoryFacts
from workflows import contracts
from workflows.models import Brief, Decision, RunStatus
from workflows.tools.read_page import READ_PAGE, ReadPageResult
from workflows.tools.record_evidence import RECORD_EVIDENCE, RecordEvidenceResult
from workflows.tools.search_web import SEARCH_WEB, SearchResult

M = TypeVar("M", bound=BaseModel)
_ENDED_AS = {"canceled": RunStatus.CANCELLED}


def _history(data: AuditData) -> HistoryFacts:
    assert data.history is not None  # needs_history: the runner skips the check without one
    return data.history


def _results(facts: HistoryFacts, name: str, model: type[M]) -> list[M | None]:
    """The completed results of one activity type, read as its result model (None: unreadable)."""
    results: list[M | None] = []
    for fact in facts.of_type(name):
        if fact.completed:
            try:
                results.append(model.model_validate(fact.result))
            except ValidationError:
                results.append(None)
    return results


@check("history-identity", "the history is this run's workflow and execution", needs_history=True)
def history_identity(data: AuditData) -> Iterator[str]:
    facts, run = _history(data), data.rows.run
    if facts.workflow_type != "ResearchWorkflow":
        yield f"the history is of workflow type {facts.workflow_type!r}"
    if facts.workflow_id != run.run_id:
        yield f"the history is of workflow {facts.workflow_id}, not {run.run_id}"
    if run.execution_id and facts.execution_id != run.execution_id:
        yield f"the history is execution {facts.execution_id}, the ledger's {run.execution_id}"


@check("history-brief", "the workflow's input is the brief the ledger holds", needs_history=True)
def history_brief(data: AuditData) -> Iterator[str]:
    try:
        started = Brief.model_validate(_history(data).brief)
    except ValidationError:
        yield "the workflow's input is not a valid brief"
        return
    if started != data.rows.run.brief:
        yield "the workflow's input differs from the ledger's brief"


@check("history-outcome", "the run ended in the ledger as it ended in history", needs_history=True)
def history_outcome(data: AuditData) -> Iterator[str]:
    facts, run = _history(data), data.rows.run
    if facts.result is not None:
        ended = (facts.result.status, facts.result.stop_reason)
        if ended != (run.status, run.stop_reason):
            yield f"history ended {ended[0]}/{ended[1]}, the ledger {run.status}/{run.stop_reason}"
    elif facts.closed in _ENDED_AS and run.status != _ENDED_AS[facts.closed]:
        yield f"history ended {facts.closed}, the ledger says {run.status}"
    elif facts.closed == "running" and run.status != RunStatus.RUNNING:
        yield f"the history is still running, the ledger says {run.status}"


@check("history-counters", "the workflow's final counters are the ledger's", needs_history=True)
def history_counters(data: AuditData) -> Iterator[str]:
    result, rows = _history(data).result, data.rows
    if result is None:
        return
    if result.counters != rows.run.counters:
        yield f"history counted {result.counters}, the ledger {rows.run.counters}"
    if (result.evidence_count, result.source_count) != (len(rows.evidence), len(rows.sources)):
        yield f"history counted {result.evidence_count} evidence and {result.source_count} sources"


@check(
    "history-steps", "the ledger's step list is the one the workflow recorded", needs_history=True
)
def history_steps(data: AuditData) -> Iterator[str]:
    recorded = _history(data).recorded_steps()
    ledger = [(step.step, contracts.one_line(step.tool)) for step in data.rows.steps]
    if not data.same_or_one_more(recorded, ledger):
        yield f"history recorded {len(recorded)} steps, the ledger holds {len(ledger)}" + (
            "" if len(recorded) != len(ledger) else ", with different tools or numbers"
        )


@check(
    "history-turns",
    "each model call in the ledger is the answer history recorded",
    needs_history=True,
)
def history_turns(data: AuditData) -> Iterator[str]:
    answered = _results(_history(data), contracts.DECIDE, Decision)
    recorded = [_turn(d) if d else None for d in answered if d is None or not d.over_context]
    ledger = [_turn(call.decision()) for call in data.rows.model_calls]
    if not data.same_or_one_more(recorded, ledger):
        pairs = enumerate(zip(recorded, ledger, strict=False), start=1)
        turn = next((n for n, (ours, theirs) in pairs if ours != theirs), 0)
        where = f": turn {turn} differs" if turn else ""
        yield f"history answered {len(recorded)} model turns, the ledger holds {len(ledger)}{where}"


def _turn(decision: Decision) -> tuple[list[str], list[str], int]:
    calls = decision.tool_calls
    return [c.name for c in calls], [c.arguments for c in calls], decision.usage.counted()


@check(
    "history-searches", "each search's results are the ones history recorded", needs_history=True
)
def history_searches(data: AuditData) -> Iterator[str]:
    found = _results(_history(data), SEARCH_WEB, SearchResult)
    recorded = [[hit.url for hit in result.hits] if result else None for result in found]
    ledger = [[result.url for result in search.results] for search in data.rows.searches]
    if not data.same_or_one_more(recorded, ledger):
        yield f"history's {len(recorded)} searches found other URLs than the ledger's {len(ledger)}"


@check(
    "history-sources",
    "the sources history read are the ledger's (URL, hash, outcome)",
    needs_history=True,
)
def history_sources(data: AuditData) -> Iterator[str]:
    read: dict[str, tuple[str, str, bool]] = {}
    for result in _results(_history(data), READ_PAGE, ReadPageResult):
        if result is not None:
            source = result.source
            read.setdefault(source.id, (source.url, source.content_hash, source.ok))
    ledger = {
        s.source_id: (s.url, s.content_hash or "", s.status == "ok") for s in data.rows.sources
    }
    for source_id in _differences(data, read, ledger):
        yield f"{source_id}: history read {read.get(source_id)}, ledger {ledger.get(source_id)}"


@check(
    "history-evidence",
    "the evidence history recorded is the ledger's, quote for quote",
    needs_history=True,
)
def history_evidence(data: AuditData) -> Iterator[str]:
    found = _results(_history(data), RECORD_EVIDENCE, RecordEvidenceResult)
    recorded = {r.evidence.id: r.evidence for r in found if r is not None and r.evidence}
    for evidence_id in _differences(data, recorded, data.evidence_models()):
        yield f"{evidence_id}: history and ledger hold different evidence"


def _differences(data: AuditData, recorded: dict[str, Any], ledger: dict[str, Any]) -> list[str]:
    """The IDs whose rows differ; after a loose end the ledger's last row may be one the workflow
    never saw."""
    keys = [*ledger, *(key for key in recorded if key not in ledger)]
    differ = [key for key in keys if recorded.get(key) != ledger.get(key)]
    unseen_last = differ == list(ledger)[-1:] and differ[0] not in recorded if differ else False
    return [] if data.loose_last_turn and unseen_last else differ


@check(
    "history-report",
    "the report the workflow returned is the one the ledger saved",
    needs_history=True,
)
def history_report(data: AuditData) -> Iterator[str]:
    result, saved = _history(data).result, data.rows.report
    if result is None:
        return
    if saved is None or saved.report != result.report:
        yield "the workflow returned another report than the ledger saved"

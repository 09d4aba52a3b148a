"""Tool execution inside the workflow: check arguments, spend budget, assign IDs, call activities.

Deterministic: the only outside effects are activity calls through the workflow's caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from pydantic import BaseModel

from workflows import contracts, gate
from workflows.cleaning import MAX_ERROR_CHARS, clean, echo
from workflows.contracts import In, Out
from workflows.models import (
    FinishArgs,
    ReadPageArgs,
    RecordEvidenceArgs,
    Report,
    RunStatus,
    SearchArgs,
    SearchHit,
    SourceRef,
    StopReason,
    ToolArgs,
    ToolCall,
    ToolResult,
)
from workflows.results import (
    EvidenceData,
    GateFailed,
    GatePassed,
    PageWindow,
    SearchData,
    SearchResultItem,
    ToolData,
    WindowPassage,
)
from workflows.state import RunState
from workflows.tools import InvalidCall, parse_call


class Outcome(BaseModel):
    """How a run ends: its status, the reason, and the report (None: compose one)."""

    status: RunStatus
    stop_reason: StopReason
    report: Report | None = None
    detail: str = ""


class Handled(BaseModel):
    """What one call came to: its result, the run's end if it ended it, its validated args."""

    result: ToolResult
    outcome: Outcome | None = None
    args: ToolArgs | None = None


class ActivityCaller(Protocol):
    def __call__(
        self, activity: contracts.Activity[In, Out], request: In, *, summary: str
    ) -> Awaitable[Out]: ...


class ToolDispatcher:
    def __init__(
        self, state: RunState, run_id: str, activity: ActivityCaller, now: Callable[[], datetime]
    ) -> None:
        self._state = state
        self._run_id = run_id
        self._activity = activity
        self._now = now

    async def dispatch(self, call: ToolCall) -> Handled:
        """Run one call: a validated call's result, or its refusal with one sentence."""
        if call.refusal:  # the host refused it before it reached the workflow
            return Handled(result=self.result(ok=False, error=call.refusal))
        try:
            args = parse_call(call)
        except InvalidCall as error:
            return Handled(result=self.result(ok=False, error=str(error)))
        try:
            if isinstance(args, SearchArgs):
                return Handled(result=await self._search(args), args=args)
            if isinstance(args, ReadPageArgs):
                return Handled(result=await self._read(args), args=args)
            if isinstance(args, RecordEvidenceArgs):
                return Handled(result=await self._record_evidence(args), args=args)
            assert isinstance(args, FinishArgs)
            result, outcome = self._finish(args)
            return Handled(result=result, outcome=outcome, args=args)
        except InvalidCall as error:
            return Handled(result=self.result(ok=False, error=str(error)), args=args)

    async def _search(self, args: SearchArgs) -> ToolResult:
        state = self._state
        if not state.take_search():
            return self.result(ok=False, error="search budget exhausted: read or record instead")
        found = await self._activity(
            contracts.SEARCH_WEB_ACTIVITY,
            contracts.SearchInput(
                run_id=self._run_id,
                step=state.counters.steps,
                turn=state.counters.model_calls,
                parent_execution=state.writer,
                query=args.query,
                allowed_hosts=state.brief.allowed_hosts,
            ),
            summary=f"search: {args.query[:80]}",
        )
        for hit in found.hits:
            state.discovered.setdefault(hit.url, hit)
        data = search_data(found.hits)
        return self.result(data=data, insufficient=not data.results)

    async def _read(self, args: ReadPageArgs) -> ToolResult:
        state = self._state
        target = state.read_target(args)
        if not state.take_fetch(target):
            return self.result(
                ok=False, error="page budget exhausted: stored pages stay readable by source_id"
            )
        page = await self._activity(
            contracts.READ_PAGE_ACTIVITY,
            contracts.ReadPageInput(
                run_id=self._run_id,
                step=state.counters.steps,
                turn=state.counters.model_calls,
                parent_execution=state.writer,
                source_id=target.source_id,
                url=target.url,
                allowed_hosts=state.brief.allowed_hosts,
                fetch=target.fetch,
                offset=args.offset,
                find=args.find,
            ),
            summary=f"read: {target.source_id} {target.url[:80]}",
        )
        state.sources[target.source_id] = page.source
        if not page.source.ok:
            return self.result(
                ok=False, error=f"{target.url} could not be read: {page.source.error}"
            )
        return self.result(data=_window(page), insufficient=not page.passages)

    async def _record_evidence(self, args: RecordEvidenceArgs) -> ToolResult:
        self._state.check_evidence(args)
        evidence_id = self._state.next_evidence_id()
        recorded = await self._activity(
            contracts.RECORD_EVIDENCE_ACTIVITY,
            contracts.RecordEvidenceInput(
                run_id=self._run_id,
                evidence_id=evidence_id,
                terms=self._state.question_terms(args.question_id),
                step=self._state.counters.steps,
                turn=self._state.counters.model_calls,
                parent_execution=self._state.writer,
                **args.model_dump(),
            ),
            summary=f"record: {evidence_id} for {args.question_id}",
        )
        if recorded.evidence is None:
            return self.result(ok=False, error=recorded.error or "evidence refused")
        state = self._state
        state.evidence[evidence_id] = recorded.evidence
        found = [  # the host's own check: the report must disclose both sides
            conflict.sentence()
            for conflict in gate.conflicts(state.evidence, state.sources, involving=evidence_id)
        ]
        data = EvidenceData(evidence_id=evidence_id, quote=recorded.evidence.quote, conflicts=found)
        return self.result(data=data)

    def _finish(self, args: FinishArgs) -> tuple[ToolResult, Outcome | None]:
        state = self._state
        left = state.take_finish_attempt()
        verdict = gate.check(args, state.evidence, state.sources, state.brief)
        if verdict.passed:
            report = Report(
                answer=args.answer,
                findings=args.findings,
                limitations=args.limitations,
                open_questions=gate.open_questions(state.brief, state.evidence),
            )
            outcome = Outcome(
                status=RunStatus.COMPLETED,
                stop_reason=StopReason.COVERAGE_GATE_PASSED,
                report=report,
            )
            return self.result(data=GatePassed(passed=True)), outcome
        result = self.result(
            ok=False,
            error="the coverage gate failed",
            data=GateFailed(
                gaps=verdict.gaps,
                finish_attempts_left=left,
                unread_urls=state.unread_urls()[:10],
            ),
        )
        if left <= 0:
            detail = "; ".join(verdict.gaps)
            return result, Outcome(
                status=RunStatus.INCOMPLETE,
                detail=detail,
                stop_reason=StopReason.FINISH_ATTEMPTS_EXHAUSTED,
            )
        return result, None

    def result(
        self,
        *,
        ok: bool = True,
        data: ToolData | None = None,
        error: str | None = None,
        insufficient: bool = False,
    ) -> ToolResult:
        return ToolResult(
            ok=ok,
            data=data,
            error=None if error is None else clean(error, MAX_ERROR_CHARS),
            insufficient=insufficient,
            budget=self._state.budget(self._now()),
        )


def search_data(hits: list[SearchHit]) -> SearchData:
    """What `search_web` returns to the model for these hits (`research search` prints it too)."""
    results = [SearchResultItem(url=hit.url, title=hit.title, snippet=hit.snippet) for hit in hits]
    note = "snippets are for discovery only: read a page before recording evidence"
    return SearchData(results=results, note=note)


def _window(page: contracts.ReadPageResult) -> PageWindow:
    source: SourceRef = page.source
    return PageWindow(
        source_id=source.id,
        url=source.url,
        title=source.title,
        passages=[
            WindowPassage(id=p.id, offset=p.start, section=p.section, text=p.text)
            for p in page.passages
        ],
        next_offset=page.next_offset,
        total_chars=page.total_chars,
        truncated=page.truncated,
    )


def describe_step(call: ToolCall, result: ToolResult, args: ToolArgs | None) -> str:
    """One short line for progress displays: `read S2 docs.example/page (6 passages)`."""
    if not result.ok:
        return f"{echo(call.name) or '(no tool call)'}: {result.error}"[:200]
    data = result.data
    if isinstance(data, SearchData) and isinstance(args, SearchArgs):
        return f"search {echo(args.query, 50)!r}: {len(data.results)} results"
    if isinstance(data, PageWindow):
        url = data.url.split("://", 1)[-1]
        return f"read {data.source_id} {url} ({len(data.passages)} passages)"
    if isinstance(data, EvidenceData) and isinstance(args, RecordEvidenceArgs):
        return f"record {data.evidence_id} for {args.question_id} from {args.source_id}"
    return "finish: the coverage gate passed"

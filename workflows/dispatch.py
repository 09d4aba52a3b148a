"""Tool execution inside the workflow: check arguments, spend budget, assign IDs, call activities.

Deterministic: the only outside effects are activity calls through the workflow's caller.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from workflows import contracts, gate
from workflows.models import (
    FinishArgs,
    ReadPageArgs,
    RecordEvidenceArgs,
    Report,
    RunStatus,
    SearchArgs,
    SourceRef,
    StopReason,
    ToolCall,
    ToolResult,
)
from workflows.state import RunState
from workflows.tools import READ_PAGE, RECORD_EVIDENCE, SEARCH_WEB, InvalidCall, parse_call

ResultT = TypeVar("ResultT", bound=BaseModel)


class Outcome(BaseModel):
    """How a run ends: its status, the reason, and the report (None: compose one)."""

    status: RunStatus
    stop_reason: StopReason
    report: Report | None = None
    detail: str = ""


class ActivityCaller(Protocol):
    def __call__(
        self, name: str, request: BaseModel, result_type: type[ResultT], *, summary: str
    ) -> Awaitable[ResultT]: ...


class ToolDispatcher:
    def __init__(
        self, state: RunState, run_id: str, activity: ActivityCaller, now: Callable[[], datetime]
    ) -> None:
        self._state = state
        self._run_id = run_id
        self._activity = activity
        self._now = now

    async def dispatch(self, call: ToolCall) -> tuple[ToolResult, Outcome | None]:
        try:
            args = parse_call(call)
            if isinstance(args, SearchArgs):
                return await self._search(args), None
            if isinstance(args, ReadPageArgs):
                return await self._read(args), None
            if isinstance(args, RecordEvidenceArgs):
                return await self._record_evidence(args), None
            assert isinstance(args, FinishArgs)
            return self._finish(args)
        except InvalidCall as error:
            return self.result(ok=False, error=str(error)), None

    async def _search(self, args: SearchArgs) -> ToolResult:
        state = self._state
        if state.counters.searches >= state.limits.max_searches:
            return self.result(ok=False, error="search budget exhausted: read or record instead")
        state.counters.searches += 1
        found = await self._activity(
            contracts.SEARCH_WEB,
            contracts.SearchInput(
                run_id=self._run_id,
                step=state.counters.steps,
                query=args.query,
                allowed_hosts=state.brief.allowed_hosts,
            ),
            contracts.SearchResult,
            summary=f"search: {args.query[:80]}",
        )
        for hit in found.hits:
            state.discovered.setdefault(hit.url, hit)
        results = [hit.model_dump(include={"url", "title", "snippet"}) for hit in found.hits]
        note = "snippets are for discovery only: read a page before recording evidence"
        return self.result(data={"results": results, "note": note}, insufficient=not results)

    async def _read(self, args: ReadPageArgs) -> ToolResult:
        state = self._state
        target = state.read_target(args)
        if target.fetch:
            if state.counters.page_fetches >= state.limits.max_page_fetches:
                return self.result(
                    ok=False, error="page budget exhausted: stored pages stay readable by source_id"
                )
            state.counters.page_fetches += 1
            state.url_index[target.url] = target.source_id
        page = await self._activity(
            contracts.READ_PAGE,
            contracts.ReadPageInput(
                run_id=self._run_id,
                step=state.counters.steps,
                source_id=target.source_id,
                url=target.url,
                allowed_hosts=state.brief.allowed_hosts,
                fetch=target.fetch,
                offset=args.offset,
                find=args.find,
            ),
            contracts.ReadPageResult,
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
            contracts.RECORD_EVIDENCE,
            contracts.RecordEvidenceInput(
                run_id=self._run_id,
                evidence_id=evidence_id,
                **args.model_dump(),
            ),
            contracts.RecordEvidenceResult,
            summary=f"record: {evidence_id} for {args.question_id}",
        )
        if recorded.evidence is None:
            return self.result(ok=False, error=recorded.error or "evidence refused")
        self._state.evidence[evidence_id] = recorded.evidence
        return self.result(data={"evidence_id": evidence_id, "quote": recorded.evidence.quote})

    def _finish(self, args: FinishArgs) -> tuple[ToolResult, Outcome | None]:
        state = self._state
        state.counters.finish_attempts += 1
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
            return self.result(data={"passed": True}), outcome
        left = state.limits.max_finish_attempts - state.counters.finish_attempts
        result = self.result(
            ok=False,
            error="the coverage gate failed",
            data={
                "gaps": verdict.gaps,
                "finish_attempts_left": left,
                "unread_urls": state.unread_urls()[:10],
            },
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
        data: dict[str, Any] | None = None,
        error: str | None = None,
        insufficient: bool = False,
    ) -> ToolResult:
        return ToolResult(
            ok=ok,
            data=data,
            error=error,
            insufficient=insufficient,
            budget=self._state.budget(self._now()),
        )


def _window(page: contracts.ReadPageResult) -> dict[str, Any]:
    source: SourceRef = page.source
    return {
        "source_id": source.id,
        "url": source.url,
        "title": source.title,
        "passages": [
            {"id": p.id, "offset": p.start, "section": p.section, "text": p.text}
            for p in page.passages
        ],
        "next_offset": page.next_offset,
        "total_chars": page.total_chars,
        "truncated": page.truncated,
    }


def describe_step(call: ToolCall, result: ToolResult) -> str:
    """One short line for progress displays: `read S2 docs.example/page (6 passages)`."""
    if not result.ok:
        return f"{call.name or '(no tool call)'}: {result.error}"[:200]
    data = result.data or {}
    if call.name == SEARCH_WEB:
        query = _argument(call, "query")
        query = query if len(query) <= 50 else query[:47] + "..."
        return f"search {query!r}: {len(data.get('results', []))} results"
    if call.name == READ_PAGE:
        url = str(data.get("url", "")).split("://", 1)[-1]
        return f"read {data.get('source_id')} {url} ({len(data.get('passages', []))} passages)"
    if call.name == RECORD_EVIDENCE:
        return (
            f"record {data.get('evidence_id')} for {_argument(call, 'question_id')} "
            f"from {_argument(call, 'source_id')}"
        )
    return "finish: the coverage gate passed"


def _argument(call: ToolCall, name: str) -> str:
    try:
        value = json.loads(call.arguments).get(name, "")
    except (ValueError, AttributeError):
        value = ""
    return str(value)[:80]

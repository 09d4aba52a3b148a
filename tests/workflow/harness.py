"""Stand-in activities registered under the real names, and a worker on the time-skipping server.

The stand-ins keep pages, searches and the ledger in memory; the workflow under test is the real
one. A scripted model hands out decisions turn by turn.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from temporalio import activity
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from activities.extract import content_hash, find_quote
from workflows import contracts
from workflows.models import (
    Brief,
    Decision,
    Evidence,
    Passage,
    SearchHit,
    SourceRef,
    ToolCall,
    Usage,
)
from workflows.research import ResearchWorkflow

Script = Callable[[contracts.DecideInput], Decision]


def call(name: str, **arguments: Any) -> Decision:
    """A decision with one tool call; each costs 10 reported tokens."""
    return Decision(
        tool_calls=[
            ToolCall(id=f"call_{uuid.uuid4().hex[:6]}", name=name, arguments=json.dumps(arguments))
        ],
        usage=Usage(input_tokens=8, output_tokens=2),
    )


@dataclass
class FakeWeb:
    """Pages by URL (a list of paragraphs each) and search results by query word."""

    pages: dict[str, list[str]] = field(default_factory=dict)
    fetches: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    steps: list[contracts.StepRecord] = field(default_factory=list)
    reports: list[contracts.SaveReportInput] = field(default_factory=list)
    decide_calls: list[contracts.DecideInput] = field(default_factory=list)
    stored: dict[tuple[str, str], tuple[str, list[Passage]]] = field(default_factory=dict)

    def text(self, url: str) -> str:
        return "\n\n".join(self.pages[url])


class StandIns:
    def __init__(
        self, web: FakeWeb, script: list[Decision] | Script, decide_delay: float = 0.0
    ) -> None:
        self.web = web
        self.script = script
        self.decide_delay = decide_delay

    def definitions(self) -> list[Callable[..., Any]]:
        return [
            self.start_run,
            self.decide,
            self.search_web,
            self.read_page,
            self.record_evidence,
            self.record_step,
            self.save_report,
        ]

    @activity.defn(name=contracts.START_RUN)
    async def start_run(self, request: contracts.StartRunInput) -> contracts.StartRunResult:
        return contracts.StartRunResult()

    @activity.defn(name=contracts.DECIDE)
    async def decide(self, request: contracts.DecideInput) -> Decision:
        self.web.decide_calls.append(request)
        if self.decide_delay:
            await asyncio.sleep(self.decide_delay)
        if callable(self.script):
            return self.script(request)
        index = request.turn - 1
        if index < len(self.script):
            return self.script[index]
        return self.script[-1]

    @activity.defn(name=contracts.SEARCH_WEB)
    async def search_web(self, request: contracts.SearchInput) -> contracts.SearchResult:
        self.web.searches.append(request.query)
        words = request.query.lower().split()
        hits = [
            SearchHit(url=url, title=url, snippet=" ".join(paras)[:80])
            for url, paras in self.web.pages.items()
            if any(word in " ".join(paras).lower() for word in words)
        ]
        return contracts.SearchResult(hits=hits, provider="stand-in")

    @activity.defn(name=contracts.READ_PAGE)
    async def read_page(self, request: contracts.ReadPageInput) -> contracts.ReadPageResult:
        key = (request.run_id, request.source_id)
        if request.fetch and key not in self.web.stored:
            self.web.fetches.append(request.url)
            if request.url not in self.web.pages:
                return contracts.ReadPageResult(
                    source=SourceRef(
                        id=request.source_id, url=request.url, ok=False, error="HTTP 404"
                    )
                )
            self.web.stored[key] = (self.web.text(request.url), _passages(self.web, request))
        text, passages = self.web.stored[key]
        window = [p for p in passages if p.end > request.offset]
        if request.find:
            window = [p for p in window if request.find.lower() in p.text.lower()]
        return contracts.ReadPageResult(
            source=SourceRef(
                id=request.source_id,
                url=request.url,
                final_url=request.url,
                content_hash=content_hash(text),
                passage_count=len(passages),
            ),
            passages=window[: request.window_passages],
            total_chars=len(text),
        )

    @activity.defn(name=contracts.RECORD_EVIDENCE)
    async def record_evidence(
        self, request: contracts.RecordEvidenceInput
    ) -> contracts.RecordEvidenceResult:
        text, passages = self.web.stored[(request.run_id, request.source_id)]
        if request.passage_id is not None:
            match = [p for p in passages if p.id == request.passage_id]
            if not match:
                return contracts.RecordEvidenceResult(error=f"unknown passage {request.passage_id}")
            span = (match[0].start, match[0].end)
        else:
            found = find_quote(text, request.quote or "")
            if found is None:
                return contracts.RecordEvidenceResult(
                    error=f"quote not found verbatim in {request.source_id}"
                )
            span = found
        return contracts.RecordEvidenceResult(
            evidence=Evidence(
                id=request.evidence_id,
                question_id=request.question_id,
                source_id=request.source_id,
                claim=request.claim,
                stance=request.stance,
                quote=text[span[0] : span[1]],
                passage_id=request.passage_id,
                start=span[0],
                end=span[1],
            )
        )

    @activity.defn(name=contracts.RECORD_STEP)
    async def record_step(self, request: contracts.StepRecord) -> contracts.RecordStepResult:
        self.web.steps.append(request)
        return contracts.RecordStepResult()

    @activity.defn(name=contracts.SAVE_REPORT)
    async def save_report(self, request: contracts.SaveReportInput) -> contracts.SaveReportResult:
        self.web.reports.append(request)
        return contracts.SaveReportResult()


def _passages(web: FakeWeb, request: contracts.ReadPageInput) -> list[Passage]:
    passages, offset = [], 0
    for number, paragraph in enumerate(web.pages[request.url], start=1):
        passages.append(
            Passage(
                id=f"{request.source_id}.P{number}",
                start=offset,
                end=offset + len(paragraph),
                text=paragraph,
            )
        )
        offset += len(paragraph) + 2
    return passages


@asynccontextmanager
async def research_worker(client: Client, stand_ins: StandIns) -> AsyncIterator[str]:
    task_queue = f"research-test-{uuid.uuid4().hex[:8]}"
    async with Worker(
        client,
        task_queue=task_queue,
        workflows=[ResearchWorkflow],
        activities=stand_ins.definitions(),
    ):
        yield task_queue


async def start(client: Client, task_queue: str, brief: Brief) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        ResearchWorkflow.run, brief, id=f"run-{uuid.uuid4().hex[:10]}", task_queue=task_queue
    )

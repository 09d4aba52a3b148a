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
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import MarkerRecordedEventAttributes
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Worker

from activities.evidence import EvidenceRefused, check, whole_sentences
from activities.markdown import render_markdown
from activities.pages.extract import content_hash, find_quote
from runtime.converter import DATA_CONVERTER
from tests.conftest import installed_binary
from workflows import context, contracts
from workflows.activity import PROVIDER_ERROR
from workflows.families import sketch, words
from workflows.models import (
    Brief,
    Decision,
    Evidence,
    Passage,
    RefusedSeed,
    SearchHit,
    SourceRef,
    ToolCall,
    Usage,
)
from workflows.research import ResearchWorkflow
from workflows.tools.read_page import (
    CHECK_SEEDS,
    READ_PAGE,
    CheckSeedsInput,
    CheckSeedsResult,
    ReadPageInput,
    ReadPageResult,
)
from workflows.tools.record_evidence import (
    RECORD_EVIDENCE,
    RecordEvidenceInput,
    RecordEvidenceResult,
)
from workflows.tools.search_web import SEARCH_WEB, SearchInput, SearchResult
from workflows.verification import VERIFY, VerifyInput, VerifyResult

Script = Callable[[contracts.DecideInput], Decision]
Verifier = Callable[[VerifyInput], VerifyResult]

# Two pages on two hosts: one answers Q1 (timeout), the other Q2 (attempts).
PAGE_A = "https://a.example/one"
PAGE_B = "https://b.example/two"
PAGES = {
    PAGE_A: ["Intro text here.", "The default timeout of a queue message is 30 seconds."],
    PAGE_B: ["Messages move to the dead-letter queue after 5 attempts."],
}
# Shares at least two content words with either page's evidence, and states no figure.
FINDING_TEXT = "A queue message, its timeout and its delivery attempts."


def with_usage(decision: Decision, input_tokens: int, output_tokens: int = 0) -> Decision:
    """The same decision, reporting a different token usage (for the token bound)."""
    return decision.model_copy(
        update={"usage": Usage(input_tokens=input_tokens, output_tokens=output_tokens)}
    )


def refusing(message: str, before: list[Decision] | None = None) -> Script:
    """A model that plays `before` and then refuses every request, as a provider with a bad key."""
    played = list(before or [])

    def script(request: contracts.DecideInput) -> Decision:
        if request.scope.turn <= len(played):
            return played[request.scope.turn - 1]
        raise ApplicationError(message, type=PROVIDER_ERROR, non_retryable=True)

    return script


class Checkpoint:
    """Holds the scripted model at one turn until the test releases it: steer a run mid-flight."""

    def __init__(self, turn: int) -> None:
        self.turn = turn
        self.reached = asyncio.Event()
        self.released = asyncio.Event()

    async def hold(self, request: contracts.DecideInput) -> None:
        if request.scope.turn == self.turn:
            self.reached.set()
            await self.released.wait()


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
    # save_report returns the report's Markdown, as the real one does (the ended run's details
    # show it then, not the last step); each one returned, in order
    render_reports: bool = False
    saved_markdown: list[str] = field(default_factory=list)
    seed_checks: list[list[str]] = field(default_factory=list)  # each check_seeds call's URLs
    decide_calls: list[contracts.DecideInput] = field(default_factory=list)
    stored: dict[tuple[str, str], tuple[str, list[Passage]]] = field(default_factory=dict)
    failed: dict[tuple[str, str], SourceRef] = field(default_factory=dict)  # stored failures

    def text(self, url: str) -> str:
        return "\n\n".join(self.pages[url])


class StandIns:
    def __init__(
        self,
        web: FakeWeb,
        script: list[Decision] | Script,
        decide_delay: float = 0.0,
        checkpoint: Checkpoint | None = None,
        read_delay: float = 0.0,
        search_error: ApplicationError | None = None,
        started: contracts.StartRunResult | None = None,
        verifier: Verifier | None = None,
    ) -> None:
        self.web = web
        self.started = started or contracts.StartRunResult()  # what start_run tells the workflow
        self.script = script
        self.decide_delay = decide_delay
        self.checkpoint = checkpoint
        self.read_delay = read_delay  # a slow page: real seconds before read_page answers
        self.search_error = search_error  # raised by every search (a refusing search provider)
        self.verifier = verifier  # set: start_run says a verifier model checks meaning
        self.verify_calls: list[VerifyInput] = []

    def definitions(self) -> list[Callable[..., Any]]:
        return [
            self.start_run,
            self.decide,
            self.search_web,
            self.read_page,
            self.check_seeds,
            self.record_evidence,
            self.record_step,
            self.save_report,
            self.verify,
        ]

    @activity.defn(name=contracts.START_RUN)
    async def start_run(self, request: contracts.StartRunInput) -> contracts.StartRunResult:
        if self.verifier is None:
            return self.started
        update = {"verifier": "model", "verifier_name": "stand-in verifier"}
        return self.started.model_copy(update=update)

    @activity.defn(name=VERIFY)
    async def verify(self, request: VerifyInput) -> VerifyResult:
        self.verify_calls.append(request)
        if self.verifier is None:
            raise ApplicationError("no verifier is configured", non_retryable=True)
        return self.verifier(request)

    @activity.defn(name=contracts.DECIDE)
    async def decide(self, request: contracts.DecideInput) -> Decision:
        self._record(request.records)  # as the real decide: the steps since the last one first
        if request.watermark is not None:  # as the real decide: the transcript from the steps
            entries = [
                s.entry for s in self.web.steps if s.entry and s.scope.step <= request.watermark
            ]
            shown = context.filled(request, entries)
            if isinstance(shown, Decision):
                return shown
            request = shown
        self.web.decide_calls.append(request)
        if self.decide_delay:
            await asyncio.sleep(self.decide_delay)
        if self.checkpoint is not None:
            await self.checkpoint.hold(request)
        if callable(self.script):
            return self.script(request)
        index = request.scope.turn - 1
        if index < len(self.script):
            return self.script[index]
        return self.script[-1]

    @activity.defn(name=SEARCH_WEB)
    async def search_web(self, request: SearchInput) -> SearchResult:
        self.web.searches.append(request.query)
        if self.search_error is not None:
            raise self.search_error
        words = request.query.lower().split()
        hits = [
            SearchHit(url=url, title=url, snippet=" ".join(paras)[:80])
            for url, paras in self.web.pages.items()
            if any(word in " ".join(paras).lower() for word in words)
        ]
        return SearchResult(hits=hits, provider="stand-in")

    @activity.defn(name=CHECK_SEEDS)
    async def check_seeds(self, request: CheckSeedsInput) -> CheckSeedsResult:
        """A seed the fake web lacks cannot be read, as `read_page` would find (nothing stored)."""
        self.web.seed_checks.append(list(request.urls))
        missing = [url for url in request.urls if url not in self.web.pages]
        return CheckSeedsResult(
            unreadable=[
                RefusedSeed(url=url, reason="could not be read: HTTP 404") for url in missing
            ]
        )

    @activity.defn(name=READ_PAGE)
    async def read_page(self, request: ReadPageInput) -> ReadPageResult:
        if self.read_delay:
            await asyncio.sleep(self.read_delay)
        key = (request.scope.run_id, request.source_id)
        if key in self.web.failed:  # a stored failure reads back as the same failure
            return ReadPageResult(source=self.web.failed[key])
        if request.fetch and key not in self.web.stored:
            self.web.fetches.append(request.url)
            if request.url not in self.web.pages:
                failure = SourceRef(
                    id=request.source_id, url=request.url, ok=False, error="HTTP 404"
                )
                self.web.failed[key] = failure
                return ReadPageResult(source=failure)
            self.web.stored[key] = (self.web.text(request.url), _passages(self.web, request))
        text, passages = self.web.stored[key]
        window = [p for p in passages if p.end > request.offset]
        if request.find:
            window = [p for p in window if request.find.lower() in p.text.lower()]
        return ReadPageResult(
            source=SourceRef(
                id=request.source_id,
                url=request.url,
                final_url=request.url,
                content_hash=content_hash(text),
                passage_count=len(passages),
                sketch=sketch(words(text)),  # as activities.snapshots makes it
            ),
            passages=window[: request.window_passages],
            total_chars=len(text),
        )

    @activity.defn(name=RECORD_EVIDENCE)
    async def record_evidence(self, request: RecordEvidenceInput) -> RecordEvidenceResult:
        text, passages = self.web.stored[(request.scope.run_id, request.source_id)]
        if request.passage_id is not None:
            match = [p for p in passages if p.id == request.passage_id]
            if not match:
                return RecordEvidenceResult(error=f"unknown passage {request.passage_id}")
            span = (match[0].start, match[0].end)
        else:
            found = find_quote(text, request.quote or "")
            if found is None:
                return RecordEvidenceResult(
                    error=f"quote not found verbatim in {request.source_id}"
                )
            span = found
        evidence = Evidence(
            id=request.evidence_id,
            question_id=request.question_id,
            source_id=request.source_id,
            claim=request.claim,
            stance=request.stance,
            quote=text[span[0] : span[1]],
            passage_id=request.passage_id,
            start=span[0],
            end=span[1],
            sentence=whole_sentences(text, span[0], span[1]),
        )
        try:  # the ledger's own rule, applied the same way
            checked = check(evidence, "", request.terms, request.question, request.judged)
        except EvidenceRefused as refused:
            return RecordEvidenceResult(error=str(refused))
        return RecordEvidenceResult(evidence=checked)

    @activity.defn(name=contracts.RECORD_STEP)
    async def record_step(self, request: contracts.StepRecord) -> contracts.RecordStepResult:
        self._record([request])
        return contracts.RecordStepResult()

    @activity.defn(name=contracts.SAVE_REPORT)
    async def save_report(self, request: contracts.SaveReportInput) -> contracts.SaveReportResult:
        self._record(request.records)
        self.web.reports.append(request)
        if not self.web.render_reports:
            return contracts.SaveReportResult()
        # Rendered as the real activity renders it (without the evidence rows it reads back).
        markdown = render_markdown(request.report, [], [], request.status, request.stop_reason)
        self.web.saved_markdown.append(markdown)
        return contracts.SaveReportResult(markdown=markdown)

    def _record(self, records: list[contracts.StepRecord]) -> None:
        """Each step once, as the ledger records it (a retried activity records nothing again)."""
        done = {(step.scope.execution, step.scope.step) for step in self.web.steps}
        self.web.steps += [r for r in records if (r.scope.execution, r.scope.step) not in done]


def _passages(web: FakeWeb, request: ReadPageInput) -> list[Passage]:
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


@asynccontextmanager
async def own_test_server() -> AsyncIterator[Client]:
    """A fresh time-skipping server, for a test whose workflow closes while an activity still runs.

    Once that happens the test server stops skipping time for the rest of its life (the activity
    keeps a time-skipping lock), which would turn later retry back-offs into real waits.
    """
    env = await WorkflowEnvironment.start_time_skipping(
        data_converter=DATA_CONVERTER,
        test_server_existing_path=installed_binary("temporal-test-server"),
    )
    try:
        yield env.client
    finally:
        await env.shutdown()


async def start(client: Client, task_queue: str, brief: Brief) -> WorkflowHandle[Any, Any]:
    return await client.start_workflow(
        ResearchWorkflow.run, brief, id=f"run-{uuid.uuid4().hex[:10]}", task_queue=task_queue
    )


def make_brief(seeds: tuple[str, ...] = (), **limits: int) -> Brief:
    """Two required questions (Q1 timeout, Q2 attempts) on the hosts of PAGES, with some limits."""
    return Brief.model_validate(
        {
            "question": "How does the queue behave?",
            "questions": [{"id": "Q1", "text": "timeout"}, {"id": "Q2", "text": "attempts"}],
            "allowed_hosts": ["a.example", "b.example"],
            "seed_urls": list(seeds),
            "limits": limits,
        }
    )


def record(
    question_id: str,
    source_id: str,
    *,
    passage_id: str | None = None,
    quote: str | None = None,
    stance: str = "supports",
    claim: str = "claim",
) -> Decision:
    """A record_evidence call citing a passage or a quote."""
    origin = {"passage_id": passage_id} if passage_id is not None else {"quote": quote}
    return call(
        "record_evidence",
        question_id=question_id,
        source_id=source_id,
        claim=claim,
        stance=stance,
        **origin,
    )


def finish(*cited: list[str], limitations: str = "") -> Decision:
    """A finish_research call with one finding per list of evidence ids."""
    findings = [{"text": FINDING_TEXT, "evidence_ids": ids} for ids in cited]
    return call("finish_research", answer="answer", findings=findings, limitations=limitations)


def markers_of(history: WorkflowHistory) -> list[MarkerRecordedEventAttributes]:
    return [
        event.marker_recorded_event_attributes
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]


def local_results(history: WorkflowHistory, activity_type: str) -> list[bytes]:
    """The results of a history's local activities of `activity_type`, as recorded in their
    markers (what `temporal workflow show` and the Web UI's event list show of them)."""
    return [
        marker.details["result"].payloads[0].data
        for marker in markers_of(history)
        if marker.marker_name == "core_local_activity"
        and json.loads(marker.details["data"].payloads[0].data)["activity_type"] == activity_type
    ]


def patches_of(history: WorkflowHistory) -> set[str]:
    """The patch ids a history's workflow code took (its `core_patch` markers)."""
    return {
        json.loads(marker.details["patch-data"].payloads[0].data)["id"]
        for marker in markers_of(history)
        if marker.marker_name == "core_patch"
    }

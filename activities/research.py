"""The research activities other than `decide`: start a run, search, read pages, record, report.

Each takes its contract input model and returns its result model. Writes go through the ledger,
keyed by the IDs the workflow assigned, so a retried activity repeats nothing: a recorded search is
returned instead of searching again, and a stored page is never downloaded again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any

import httpx
from opentelemetry import trace
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities import spans
from activities.evidence import record_evidence
from activities.heartbeat import heartbeating
from activities.ledger import Ledger, RunLedger, StoredSource, UnknownRun, ledger_errors
from activities.ledger.repository import LEDGER_REFUSED
from activities.markdown import render_markdown
from activities.pages.budget import ExtractionOverBudget, run_within_cpu_budget
from activities.pages.extract import Extracted, extract
from activities.pages.fetch import (
    FetchClient,
    FetchedPage,
    FetchFailed,
    FetchRefused,
    client_policy,
    fetch_page,
)
from activities.pages.guard import refusal_reason
from activities.search import SearchProvider, keep_allowed
from activities.snapshots import snapshot
from runtime.options import FetchLimits, ResearchOptions
from workflows import contracts
from workflows.hosts import host_matches
from workflows.models import Brief, RefusedSeed, SourceRef
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
from workflows.verification import Verification

ClientFor = Callable[[dict[str, str]], httpx.AsyncClient]  # corpus folders -> a fetch client

# The report Markdown handed back for the Web UI (the ledger keeps it whole).
MAX_DETAILS_CHARS = 20_000


class ResearchActivities:
    """Bound activity methods sharing the ledger, the fetch client and the search provider."""

    def __init__(
        self,
        ledger: Ledger,
        http: httpx.AsyncClient,
        options: ResearchOptions,
        search: SearchProvider,
        *,
        client_for: ClientFor | None = None,
        corpus_folders: dict[str, str] | None = None,
    ) -> None:
        """With `client_for`, a fetch first checks the corpus folders the ledger remembers and
        swaps in a client serving them when they changed (`http` served `corpus_folders`)."""
        self._ledger = ledger
        self._http = http
        self._options = options
        self._search = search
        self._client_for = client_for
        self._folders = corpus_folders or {}
        self._retired: list[httpx.AsyncClient] = []  # may still serve a fetch: closed at exit

    async def aclose(self) -> None:
        for client in [*self._retired, self._http]:
            await client.aclose()

    def definitions(self) -> list[Callable[..., Any]]:
        return [
            self.start_run,
            self.search_web,
            self.read_page,
            self.check_seeds,
            self.record_evidence,
            self.record_step,
            self.save_report,
        ]

    @activity.defn(name=contracts.START_RUN)
    async def start_run(self, request: contracts.StartRunInput) -> contracts.StartRunResult:
        scope = request.scope
        async with ledger_errors():
            created = await self._ledger.start_run(
                scope.run_id,
                request.brief,
                request.started_at,
                scope.execution,
                request.first_execution_id,
            )
            checked = Verification(
                mode=self._options.verifier_mode, verifier=self._options.verifier_name
            )
            lane = self._lane(request.brief)
            if request.brief.rerun_of is not None:  # checked as its source was (replayed)
                checked = await self._ledger.report_verification(request.brief.rerun_of)
                source = await self._ledger.run(request.brief.rerun_of)
                if source is not None and "fixed" in source.lanes:  # its lanes, as it ran them
                    lane = request.brief.lane or ("auto" if "agent" in source.lanes else "fixed")
        return contracts.StartRunResult(
            created=created,
            execution_id=scope.execution,
            search_attributes=self._options.search_attributes,
            local_search=self._search.name == "corpus",
            local_hosts=await self._local_hosts(request.brief.allowed_hosts),
            # A rerun's `decide` (the `replay` provider) stays a regular activity on any worker,
            # so its refusal (no decision recorded for a turn) ends the run `provider_error` with
            # the reason.
            local_model=self._options.local_model and request.brief.rerun_of is None,
            model_timeout_seconds=self._options.model_timeout_seconds,
            verifier=checked.mode,
            verifier_name=checked.verifier,
            continue_after_steps=self._options.continue_after_steps,
            lane=lane,
        )

    def _lane(self, brief: Brief) -> str:
        """The lane the run starts in: the brief's (default RESEARCH_LANE) when this worker has a
        model; the offline policy keeps its own loop, and a rerun runs the lanes its source ran
        (a source of the agent alone, or from before lanes: the agent)."""
        if not self._options.lanes or brief.rerun_of is not None:
            return "agent"
        return brief.lane or self._options.default_lane

    @activity.defn(name=SEARCH_WEB)
    async def search_web(self, request: SearchInput) -> SearchResult:
        async with heartbeating():  # a web search may take seconds, and so may a busy pool
            return await self._search_web(request)

    async def _search_web(self, request: SearchInput) -> SearchResult:
        step = request.scope.step
        async with ledger_errors():
            ledger = await self._ledger.bind(request.scope)
            recorded = await ledger.recorded_search(step)
            if recorded is not None:  # a retry: the search already ran and was recorded
                return SearchResult(provider=recorded[0], hits=recorded[1])
            hits = await self._search.search(
                request.query, request.allowed_hosts, request.max_results
            )
            hits = keep_allowed(hits, request.allowed_hosts, request.max_results)
            stored = await ledger.record_search(step, request.query, self._search.name, hits)
        return SearchResult(provider=self._search.name, hits=stored)

    @activity.defn(name=READ_PAGE)
    async def read_page(self, request: ReadPageInput) -> ReadPageResult:
        async with heartbeating():  # a fetch may take up to its timeout
            return await self._read_page(request)

    async def _read_page(self, request: ReadPageInput) -> ReadPageResult:
        async with ledger_errors():
            ledger = await self._ledger.bind(request.scope)
            stored = await ledger.source(request.source_id, request.url)
            if stored is None:
                stored = await self._fetch(request, ledger)
            if not stored.ref.ok:
                return ReadPageResult(source=stored.ref)
            window = await ledger.window(
                stored.ref.id,
                request.offset,
                request.find,
                request.window_passages,
                request.window_chars,
            )
        return ReadPageResult(
            source=stored.ref,
            passages=window.passages,
            next_offset=window.next_offset,
            total_chars=stored.total_chars,
            truncated=stored.truncated,
            more_matches=window.more_matches,
        )

    @activity.defn(name=CHECK_SEEDS)
    async def check_seeds(self, request: CheckSeedsInput) -> CheckSeedsResult:
        """Each seed URL read as `read_page` would read it (fetched, its text extracted), then
        dropped: the ones that cannot be read, with why. Nothing is stored."""
        unreadable: list[RefusedSeed] = []
        async with heartbeating():
            for url in request.urls:
                try:
                    await self._read(url, request.allowed_hosts)
                except (FetchRefused, FetchFailed, ValueError) as failed:
                    reason = f"could not be read: {_sentence(failed)}"
                    unreadable.append(RefusedSeed(url=url, reason=reason))
        return CheckSeedsResult(unreadable=unreadable)

    @activity.defn(name=RECORD_EVIDENCE)
    async def record_evidence(self, request: RecordEvidenceInput) -> RecordEvidenceResult:
        async with ledger_errors():
            ledger = await self._ledger.bind(request.scope)
            return await record_evidence(self._ledger, request, execution=ledger.execution)

    @activity.defn(name=contracts.RECORD_STEP)
    async def record_step(self, request: contracts.StepRecord) -> contracts.RecordStepResult:
        async with ledger_errors():
            ledger = await self._ledger.bind(request.scope)
            inserted = await ledger.record_step(request)
        return contracts.RecordStepResult(inserted=inserted, execution_id=ledger.execution or "")

    @activity.defn(name=contracts.SAVE_REPORT)
    async def save_report(self, request: contracts.SaveReportInput) -> contracts.SaveReportResult:
        run_id = request.scope.run_id
        async with ledger_errors():
            run = await self._ledger.run(run_id)
            if run is None:
                raise UnknownRun(run_id)
            ledger = await self._ledger.bind(request.scope)
            for record in request.records:  # what a failure or a cancel left unrecorded
                if not await _recorded_unless_refused(ledger, record):
                    break  # no row after a hole
            evidence = await ledger.evidence_rows()
            sources = await ledger.sources()
            markdown = render_markdown(
                request.report,
                evidence,
                sources,
                request.status,
                request.stop_reason,
                question=run.question,
                verification=request.verification,
                lanes=(request.lanes, request.escalation),
            )
            await ledger.save_report(request, markdown)
        return contracts.SaveReportResult(saved=True, markdown=markdown[:MAX_DETAILS_CHARS])

    # ------------------------------------------------------------ reading a new page

    async def _fetch(self, request: ReadPageInput, ledger: RunLedger) -> StoredSource:
        """Download, extract and store a page (or its failure); the source as stored."""
        if not request.fetch:
            raise ApplicationError(
                f"source {request.source_id} is not stored for run {ledger.run_id}, "
                "and this read may not fetch it",
                type="UnknownSource",
                non_retryable=True,
            )
        ref = await self._download(request, ledger)
        stored = await ledger.source(ref.id, request.url)
        return stored if stored is not None else StoredSource(ref=ref)

    async def _local_hosts(self, allowed_hosts: list[str]) -> list[str]:
        """The allowed hosts the fetch client serves from disk (the corpus), never the network: a
        corpus host whose redirects may send a read elsewhere is not one."""
        client = await self._client()
        served = client_policy(client).corpus_hosts
        offline = client.offline_hosts if isinstance(client, FetchClient) else frozenset()
        return sorted(host for host in served & offline if host_matches(host, allowed_hosts))

    async def _client(self) -> httpx.AsyncClient:
        """The fetch client, serving every corpus folder indexed so far (even after start)."""
        if self._client_for is not None:
            folders = await self._ledger.corpus_folders()
            if folders != self._folders:
                self._retired.append(self._http)
                self._http, self._folders = self._client_for(folders), folders
        return self._http

    async def _read(self, url: str, allowed_hosts: list[str]) -> tuple[FetchedPage, Extracted]:
        """The page at `url` fetched within the fetch limits, and its text extracted."""
        limits = self._options.fetch
        page = await fetch_page(
            await self._client(),
            url,
            allowed_hosts,
            max_bytes=limits.max_bytes,
            timeout_seconds=limits.timeout_seconds,
            max_decoded_bytes=limits.max_decoded_bytes,
        )
        return page, await _extract(page, limits)

    async def _download(self, request: ReadPageInput, ledger: RunLedger) -> SourceRef:
        source_id, url, step = request.source_id, request.url, request.scope.step
        try:
            page, extracted = await self._read(url, request.allowed_hosts)
        except FetchRefused as refused:
            return await ledger.store_failed_source(
                source_id, url, "refused", _sentence(refused), step
            )
        except (FetchFailed, ValueError) as failed:
            return await ledger.store_failed_source(
                source_id, url, "failed", _sentence(failed), step
            )
        return await ledger.store_source(source_id, snapshot(page, extracted), step)


async def _extract(page: FetchedPage, limits: FetchLimits) -> Extracted:
    """The page's text, within RESEARCH_EXTRACT_CPU_SECONDS of CPU time (off the event loop)."""
    work = partial(extract, page.body, _content_type(page), max_chars=limits.max_snapshot_chars)
    try:
        return await asyncio.to_thread(run_within_cpu_budget, work, limits.extract_cpu_seconds)
    except ExtractionOverBudget as over:
        message = (
            f"extracting the text of {page.final_url} took {over} "
            "(RESEARCH_EXTRACT_CPU_SECONDS), so the page was refused"
        )
        # Counted and logged with the guard's refusals (the fetch's own span has ended).
        spans.refused(trace.get_current_span(), refusal_reason(message), message)
        raise FetchRefused(message) from None


def _content_type(page: FetchedPage) -> str:
    return f"{page.content_type}; charset={page.charset}" if page.charset else page.content_type


def _sentence(error: Exception) -> str:
    return str(error).strip() or type(error).__name__


async def _recorded_unless_refused(ledger: RunLedger, record: contracts.StepRecord) -> bool:
    """A step the report's save carries, left by a failure (perhaps this very row, refused
    when a decide carried it) or a cancel: the run ended by that cause, so a row the ledger
    refuses for good does not also keep the report from being saved. False: refused."""
    try:
        async with ledger_errors():
            await ledger.record_step(record)
    except ApplicationError as error:
        if error.type != LEDGER_REFUSED:
            raise
        activity.logger.warning("step %d not recorded: %s", record.scope.step, error.message)
        return False
    return True

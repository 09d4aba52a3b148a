"""The research activities through Temporal's ActivityEnvironment, on PostgreSQL and a corpus."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.pages.corpus_transport import CorpusTransport
from activities.pages.fetch import FetchClient, build_http_client
from activities.research import ResearchActivities
from activities.search import CorpusSearch, index_corpus
from runtime.settings import Settings
from tests.fakes.transports import CountingTransport
from workflows import contracts
from workflows.models import Brief, Counters, Finding, Report, RunStatus, SearchHit, StopReason
from workflows.scope import RunScope
from workflows.tools.read_page import CheckSeedsInput, ReadPageInput
from workflows.tools.record_evidence import RecordEvidenceInput
from workflows.tools.search_web import SearchInput

PAGE = """<html><head><title>Hybrid caches</title></head><body><main>
<h1>Hybrid caches</h1>
<p>Each node keeps hot keys in process memory.</p>
<h2>Invalidation</h2><p>Invalidation messages travel over pub/sub to every node.</p>
<h2>Expiry</h2><p>A time-to-live bounds staleness when a message is lost.</p>
</main></body></html>"""


class CountingSearch(CorpusSearch):
    """The corpus provider, counting how often it is asked."""

    calls = 0

    async def search(self, query: str, allowed_hosts: list[str], limit: int) -> list[SearchHit]:
        self.calls += 1
        return await super().search(query, allowed_hosts, limit)


@dataclass
class Harness:
    activities: ResearchActivities
    ledger: Ledger
    web: CountingTransport
    search: CountingSearch
    host: str
    run_id: str
    env: ActivityEnvironment

    def url(self, path: str) -> str:
        return f"https://{self.host}/{path}"

    def read(self, path: str, **fields: object) -> ReadPageInput:
        values: dict[str, object] = {
            "scope": RunScope.tool_of(self.run_id, "", 1, 0, ""),
            "source_id": "S1",
            "url": self.url(path),
            "allowed_hosts": [self.host],
            "fetch": True,
        }
        return ReadPageInput.model_validate(values | fields)


@pytest.fixture
async def harness(pg_url: str, tmp_path: Path) -> AsyncIterator[Harness]:
    host = f"docs-{uuid.uuid4().hex[:10]}.example"
    (tmp_path / host).mkdir()
    (tmp_path / host / "cache.html").write_text(PAGE, encoding="utf-8")
    (tmp_path / host / "data.json").write_text("{}", encoding="utf-8")
    settings = Settings(state_dir=tmp_path / "state", corpus_dir=tmp_path)
    pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
        pg_url, open=False, max_size=4
    )
    await pool.open(wait=True)
    web = CountingTransport(CorpusTransport(tmp_path))
    async with FetchClient(timeout_seconds=5, transport=web) as http:
        ledger = Ledger(pool)
        search = CountingSearch(ledger)
        activities = ResearchActivities(ledger, http, settings.research_options(), search)
        run_id = f"test-{uuid.uuid4().hex[:12]}"
        yield Harness(activities, ledger, web, search, host, run_id, ActivityEnvironment())
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM research.corpus_documents WHERE host = %s", (host,))
    await pool.close()


async def start(harness: Harness) -> None:
    brief = Brief(question="How do hybrid caches invalidate?", allowed_hosts=[harness.host])
    request = contracts.StartRunInput(
        scope=RunScope.start(harness.run_id, ""),
        brief=brief,
        started_at="2025-01-02T03:04:05+00:00",
    )
    result = await harness.env.run(harness.activities.start_run, request)
    assert result.created


async def test_a_page_is_fetched_once(harness: Harness) -> None:
    await start(harness)
    read = harness.activities.read_page
    first = await harness.env.run(read, harness.read("cache.html"))
    assert first.source.ok and first.source.title == "Hybrid caches"
    assert [passage.id for passage in first.passages][:2] == ["S1.P1", "S1.P2"]
    assert first.total_chars > 0 and first.next_offset is None and not first.truncated
    retried = await harness.env.run(read, harness.read("cache.html"))
    assert retried == first
    found = await harness.env.run(read, harness.read("cache.html", fetch=False, find="PUB/SUB"))
    assert [passage.text for passage in found.passages] == [
        "Invalidation\n\nInvalidation messages travel over pub/sub to every node."
    ]
    assert not found.more_matches, "the one passage holding it"
    # a find window cut short says more passages hold the term past it
    cut = harness.read("cache.html", fetch=False, find="node", window_passages=1)
    first_node = await harness.env.run(read, cut)
    assert len(first_node.passages) == 1 and first_node.more_matches
    assert harness.web.urls == [harness.url("cache.html")]


async def test_a_failed_fetch_is_stored_and_returned_as_an_error(harness: Harness) -> None:
    await start(harness)
    read = harness.activities.read_page
    missing = await harness.env.run(read, harness.read("missing.html"))
    assert not missing.source.ok and missing.passages == []
    assert missing.source.error == f"HTTP 404 from {harness.url('missing.html')}"
    again = await harness.env.run(read, harness.read("missing.html"))
    assert again == missing and len(harness.web.urls) == 1
    data = await harness.env.run(read, harness.read("data.json", source_id="S2"))
    assert not data.source.ok and "not a page type that can be read" in (data.source.error or "")
    stored = await harness.ledger.source(harness.run_id, "S2")
    assert stored is not None and stored.ref.error == data.source.error


async def test_checking_seeds_names_each_unreadable_one_and_stores_nothing(
    harness: Harness,
) -> None:
    await start(harness)
    urls = [harness.url(path) for path in ("cache.html", "missing.html", "data.json")]
    request = CheckSeedsInput(
        scope=RunScope.start(harness.run_id, ""), urls=urls, allowed_hosts=[harness.host]
    )

    checked = await harness.env.run(harness.activities.check_seeds, request)

    assert [seed.url for seed in checked.unreadable] == urls[1:]
    assert checked.unreadable[0].reason == f"could not be read: HTTP 404 from {urls[1]}"
    assert "not a page type that can be read" in checked.unreadable[1].reason
    assert harness.web.urls == urls, "read once each, through the fetcher"
    assert await harness.ledger.source(harness.run_id, "S1") is None, "nothing stored"


async def test_a_refused_url_is_never_requested(harness: Harness) -> None:
    await start(harness)
    request = harness.read("cache.html", url="https://elsewhere.example/cache.html")
    result = await harness.env.run(harness.activities.read_page, request)
    assert not result.source.ok and "not in the allowed hosts" in (result.source.error or "")
    assert harness.web.urls == []


async def test_reading_an_unstored_source_without_fetch_fails_for_good(harness: Harness) -> None:
    await start(harness)
    with pytest.raises(ApplicationError) as raised:
        await harness.env.run(harness.activities.read_page, harness.read("cache.html", fetch=False))
    assert raised.value.non_retryable
    assert harness.web.urls == []


async def test_a_search_is_recorded_and_never_repeated(harness: Harness, tmp_path: Path) -> None:
    await start(harness)
    await index_corpus(harness.ledger, tmp_path, max_chars=10_000)
    request = SearchInput(
        scope=RunScope.tool_of(harness.run_id, "", 1, 0, ""),
        query="cache invalidation",
        allowed_hosts=[harness.host],
    )
    first = await harness.env.run(harness.activities.search_web, request)
    assert first.provider == "corpus"
    assert [hit.url for hit in first.hits] == [harness.url("cache.html")]
    again = await harness.env.run(harness.activities.search_web, request)
    assert again == first and harness.search.calls == 1


async def test_evidence_step_and_report(harness: Harness) -> None:
    await start(harness)
    activities, env = harness.activities, harness.env
    await env.run(activities.read_page, harness.read("cache.html"))
    evidence = RecordEvidenceInput(
        scope=RunScope.tool_of(harness.run_id, "", 0, 0, ""),
        evidence_id="E001",
        question_id="Q1",
        source_id="S1",
        claim="Invalidations are broadcast.",
        stance="supports",
        quote="Invalidation messages travel over pub/sub",
    )
    recorded = await env.run(activities.record_evidence, evidence)
    assert recorded.evidence is not None and recorded.evidence.passage_id is not None
    step = contracts.StepRecord(
        scope=RunScope.record_of(harness.run_id, "", 1, 1, ""),
        tool="read_page",
        arguments="{}",
        ok=True,
    )
    assert (await env.run(activities.record_step, step)).inserted
    assert not (await env.run(activities.record_step, step)).inserted
    report = Report(
        answer="By broadcasting invalidations.",
        findings=[Finding(text="Invalidations are broadcast.", evidence_ids=["E001"])],
        limitations="One source only.",
    )
    save = contracts.SaveReportInput(
        scope=RunScope.end_of(harness.run_id, "", Counters(steps=3), ""),
        status=RunStatus.COMPLETED,
        stop_reason=StopReason.COVERAGE_GATE_PASSED,
        report=report,
        counters=Counters(steps=3),
        finished_at="2025-01-02T03:05:00+00:00",
    )
    # The save records the steps a failure or a cancel left; one the ledger refuses (text
    # PostgreSQL cannot store) does not keep the report from being saved, and no row follows it.
    carried = [
        step.model_copy(update={"scope": RunScope.record_of(harness.run_id, "", n, n, "")})
        for n in (2, 3)
    ]
    carried[0] = carried[0].model_copy(update={"arguments": '{"query": "a\u0000b"}'})
    save = save.model_copy(update={"records": carried})
    assert (await env.run(activities.save_report, save)).saved
    assert [row.step for row in await harness.ledger.steps(harness.run_id)] == [1]
    markdown = await harness.ledger.report(harness.run_id)
    assert markdown is not None
    assert "```text\nInvalidation messages travel over pub/sub" in markdown
    assert harness.url("cache.html") in markdown and "**E001**" in markdown
    assert "Status: completed | Stop: coverage_gate_passed" in markdown


async def test_a_run_never_started_fails_for_good(harness: Harness) -> None:
    step = contracts.StepRecord(
        scope=RunScope.record_of(harness.run_id, "", 1, 1, ""),
        tool="search_web",
        arguments="{}",
        ok=True,
    )
    with pytest.raises(ApplicationError) as raised:
        await harness.env.run(harness.activities.record_step, step)
    assert raised.value.non_retryable and raised.value.type == "UnknownRun"


async def test_pages_indexed_from_any_folder_are_readable_without_a_setting(
    pg_url: str, tmp_path: Path
) -> None:
    """`research corpus index DIR --host H` while a worker runs: the worker's next fetch serves H
    from DIR (no RESEARCH_CORPUS_DIR), and indexing H again drops what DIR no longer holds."""
    host = f"anywhere-{uuid.uuid4().hex[:10]}.example"
    folder = tmp_path / "some" / "where"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "cache.html").write_text(PAGE, encoding="utf-8")
    (folder / "old.html").write_text(PAGE.replace("Hybrid", "Retired"), encoding="utf-8")
    settings = Settings(state_dir=tmp_path / "state", corpus_dir=tmp_path / "empty")
    pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
        pg_url, open=False, max_size=4
    )
    await pool.open(wait=True)
    ledger = Ledger(pool)

    def client_for(folders: dict[str, str]) -> FetchClient:
        return build_http_client(
            settings.fetch_options(), corpus_folders={h: Path(f) for h, f in folders.items()}
        )

    activities = ResearchActivities(
        ledger,
        client_for({}),
        settings.research_options(),
        CorpusSearch(ledger),
        client_for=client_for,
    )
    try:
        assert await index_corpus(ledger, folder, max_chars=10_000, host=host) == 2
        assert (await ledger.corpus_folders())[host] == str(folder.resolve())
        run_id = f"test-{uuid.uuid4().hex[:12]}"
        brief = Brief(question="How do hybrid caches invalidate?", allowed_hosts=[host])
        await activities.start_run(
            contracts.StartRunInput(
                scope=RunScope.start(run_id, ""), brief=brief, started_at="2025-01-02T03:04:05Z"
            )
        )
        hits = await ledger.search_corpus("hybrid caches invalidation", [host], 8)
        assert f"https://{host}/guide/cache.html" in [hit.url for hit in hits]

        read = ReadPageInput(
            scope=RunScope.tool_of(run_id, "", 1, 0, ""),
            source_id="S1",
            url=f"https://{host}/guide/cache.html",
            allowed_hosts=[host],
            fetch=True,
        )
        page = await ActivityEnvironment().run(activities.read_page, read)
        assert page.source.ok, page.source.error
        assert page.passages[0].text.startswith("Hybrid caches")

        (folder / "old.html").unlink()
        assert await index_corpus(ledger, folder, max_chars=10_000, host=host) == 1
        hits = await ledger.search_corpus("retired caches", [host], 8)
        assert [hit.url for hit in hits] == [f"https://{host}/guide/cache.html"]

        # The automatic index of a corpus folder that also has the host leaves it where it is.
        (tmp_path / "dev" / host).mkdir(parents=True)
        (tmp_path / "dev" / host / "other.html").write_text(PAGE, encoding="utf-8")
        await index_corpus(ledger, tmp_path / "dev", max_chars=10_000, keep_other_folders=True)
        assert (await ledger.corpus_folders())[host] == str(folder.resolve())
        hits = await ledger.search_corpus("hybrid caches", [host], 8)
        assert [hit.url for hit in hits] == [f"https://{host}/guide/cache.html"]
    finally:
        await activities.aclose()
        async with pool.connection() as conn:
            await conn.execute("DELETE FROM research.corpus_documents WHERE host = %s", (host,))
            await conn.execute("DELETE FROM research.corpus_hosts WHERE host = %s", (host,))
        await pool.close()


async def test_start_run_calls_a_corpus_host_local_only_when_it_never_sends_a_read_away(
    pg_url: str, tmp_path: Path
) -> None:
    """A page read of a host served from disk runs as a local activity (start_run's local_hosts),
    which must not wait on the network: a host folder whose _redirects.json may send a read to
    another host (a 301 the fetcher follows) stays a regular activity's."""
    tag = uuid.uuid4().hex[:10]
    plain, redirecting = f"plain-{tag}.example", f"moved-{tag}.example"
    for host in (plain, redirecting):
        (tmp_path / host).mkdir()
        (tmp_path / host / "cache.html").write_text(PAGE, encoding="utf-8")
    redirects = {"/old.html": "https://elsewhere.example/new.html"}
    (tmp_path / redirecting / "_redirects.json").write_text(json.dumps(redirects), "utf-8")
    settings = Settings(state_dir=tmp_path / "state", corpus_dir=tmp_path)
    pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
        pg_url, open=False, max_size=4
    )
    await pool.open(wait=True)
    try:
        async with build_http_client(settings.fetch_options()) as http:
            ledger = Ledger(pool)
            activities = ResearchActivities(
                ledger, http, settings.research_options(), CorpusSearch(ledger)
            )
            brief = Brief(
                question="How do hybrid caches invalidate?", allowed_hosts=[plain, redirecting]
            )
            started = await ActivityEnvironment().run(
                activities.start_run,
                contracts.StartRunInput(
                    scope=RunScope.start(f"test-{uuid.uuid4().hex[:12]}", ""),
                    brief=brief,
                    started_at="2025-01-02T03:04:05Z",
                ),
            )
    finally:
        await pool.close()
    assert started.local_hosts == [plain]

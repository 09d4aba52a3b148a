"""Page extraction has a CPU-time budget (RESEARCH_EXTRACT_CPU_SECONDS): a PDF built to be slow to
extract (a small compressed stream holding megabytes of drawing operators) is stopped within its
budget and stored as refused with that sentence; ordinary pages are not affected."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg_pool import AsyncConnectionPool
from temporalio.testing import ActivityEnvironment

from activities.ledger import Ledger
from activities.pages.budget import ExtractionOverBudget, run_within_cpu_budget
from activities.pages.corpus_transport import CorpusTransport
from activities.pages.extract import extract
from activities.pages.fetch import FetchClient
from activities.research import ResearchActivities
from activities.search import CorpusSearch
from runtime.settings import Settings
from tests.fakes.pdf import Flate, build_pdf, pdf_from_content_streams
from workflows import contracts
from workflows.models import Brief
from workflows.scope import RunScope
from workflows.tools.read_page import ReadPageInput

BUDGET = 0.5  # seconds of CPU: the slow PDF below takes several


def slow_pdf() -> bytes:
    """About 20 KB on the wire, 3.9 MB of content (just under the 4 MB content cap): one line of
    text, then 110,000 drawing operations that pypdf must parse to find any more text."""
    drawing = b"1 0 0 1 0 0 cm 0.5 g 10 10 5 5 re f\n" * 110_000
    text = b"BT /F1 12 Tf 72 720 Td (The drawing below is very long.) Tj ET\n"
    return pdf_from_content_streams([Flate(text + drawing)])


def test_a_slow_pdf_is_stopped_within_its_cpu_budget() -> None:
    body = slow_pdf()
    assert len(body) < 30_000
    spent: list[float] = []

    def work() -> object:
        try:
            return extract(body, "application/pdf", max_chars=200_000)
        finally:  # the CPU of the work's own thread, as the budget counts it: the other threads
            spent.append(time.thread_time())  # of the process (the test runner's) do not count

    with pytest.raises(ExtractionOverBudget, match=r"more than 0.5 s of CPU time"):
        run_within_cpu_budget(work, BUDGET)
    assert BUDGET <= spent[0] < BUDGET + 0.5, f"{spent[0]:.2f} s of CPU for a {BUDGET} s budget"


def test_work_within_its_budget_returns_its_result_and_its_errors() -> None:
    pdf = build_pdf([[["A short page of text."]]])
    extracted = run_within_cpu_budget(lambda: extract(pdf, "application/pdf", max_chars=1000), 2)
    assert "A short page of text." in extracted.text
    with pytest.raises(ValueError, match="damaged or not a PDF"):
        run_within_cpu_budget(lambda: extract(b"%PDF-1.4 junk", "application/pdf", max_chars=10), 2)


@pytest.fixture
async def activities(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[ResearchActivities, str]]:
    host = f"docs-{uuid.uuid4().hex[:10]}.example"
    (tmp_path / host).mkdir()
    (tmp_path / host / "slow.pdf").write_bytes(slow_pdf())
    (tmp_path / host / "fine.pdf").write_bytes(build_pdf([[["An ordinary page."]]]))
    settings = Settings(
        state_dir=tmp_path / "state", corpus_dir=tmp_path, extract_cpu_seconds=BUDGET
    )
    pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
        pg_url, open=False, max_size=4
    )
    await pool.open(wait=True)
    async with FetchClient(timeout_seconds=5, transport=CorpusTransport(tmp_path)) as http:
        ledger = Ledger(pool)
        yield (
            ResearchActivities(ledger, http, settings.research_options(), CorpusSearch(ledger)),
            host,
        )
    await pool.close()


async def test_a_page_over_its_budget_is_stored_as_refused_with_that_sentence(
    activities: tuple[ResearchActivities, str], pg_url: str
) -> None:
    research, host = activities
    env = ActivityEnvironment()
    run_id = f"test-{uuid.uuid4().hex[:12]}"
    brief = Brief(question="What does the drawing show?", allowed_hosts=[host])
    start = contracts.StartRunInput(
        scope=RunScope.start(run_id, ""), brief=brief, started_at="2025-01-02T03:04:05+00:00"
    )
    await env.run(research.start_run, start)

    def read(source_id: str, name: str) -> ReadPageInput:
        return ReadPageInput(
            scope=RunScope.tool_of(run_id, "", 1, 0, ""), source_id=source_id,
            url=f"https://{host}/{name}", allowed_hosts=[host], fetch=True,
        )  # fmt: skip

    slow = await env.run(research.read_page, read("S1", "slow.pdf"))
    assert not slow.source.ok and slow.passages == []
    assert slow.source.error == (
        f"extracting the text of https://{host}/slow.pdf took more than 0.5 s of CPU time "
        "(RESEARCH_EXTRACT_CPU_SECONDS), so the page was refused"
    )
    with psycopg.connect(pg_url) as conn:
        row = conn.execute(
            "SELECT status FROM research.sources WHERE run_id = %s AND source_id = 'S1'", (run_id,)
        ).fetchone()
    assert row == ("refused",)
    fine = await env.run(research.read_page, read("S2", "fine.pdf"))
    assert fine.source.ok and "An ordinary page." in fine.passages[0].text

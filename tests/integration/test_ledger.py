"""The ledger on a real PostgreSQL: idempotent writes, foreign keys, quotes, windows, search."""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from activities.evidence import record_evidence
from activities.ledger import Ledger, RunIdTaken, UnknownRun
from activities.pages.extract import Extracted, PassageSpan, extract
from activities.pages.page import FetchedPage
from activities.search import CorpusSearch, index_corpus
from activities.snapshots import snapshot
from runtime.database import Pool, apply_migrations, migrations
from workflows.contracts import SaveReportInput, StepRecord
from workflows.models import (
    Brief,
    Counters,
    Decision,
    Finding,
    Report,
    RunStatus,
    SearchHit,
    StopReason,
    ToolCall,
    Usage,
)
from workflows.scope import RunScope
from workflows.tools.record_evidence import RecordEvidenceInput

STARTED = "2025-01-02T03:04:05+00:00"
PARAGRAPHS = [
    "Hybrid caches keep hot keys in process memory.",
    "Invalidation messages travel over a pub/sub channel\nto every node within milliseconds.",
    "A time-to-live bounds staleness when a message is lost.",
    "Write-through updates the shared cache before the database commit returns.",
]
PAGE_TEXT = "\n\n".join(PARAGRAPHS)


@pytest.fixture
async def run_id(ledger: Ledger) -> str:
    """A fresh, started run: the database is shared by the whole session."""
    run = f"test-{uuid.uuid4().hex[:12]}"
    brief = Brief(question="How do hybrid caches invalidate?", allowed_hosts=["docs.example"])
    assert await ledger.start_run(run, brief, STARTED)
    return run


def page(url: str = "https://docs.example/cache.txt", text: str = PAGE_TEXT) -> FetchedPage:
    body = text.encode("utf-8")
    return FetchedPage(url, url, 200, "text/plain", "utf-8", body)


def extracted(text: str = PAGE_TEXT) -> Extracted:
    """The page's snapshot with one passage per paragraph (whatever extraction would merge)."""
    snapshot = extract(text.encode("utf-8"), "text/plain; charset=utf-8", max_chars=10_000)
    spans, start = [], 0
    for paragraph in snapshot.text.split("\n\n"):
        spans.append(PassageSpan(start=start, end=start + len(paragraph), section=""))
        start += len(paragraph) + 2
    return dataclasses.replace(snapshot, passages=spans)


async def count(pool: Pool, table: str, run: str) -> int:
    query = sql.SQL("SELECT count(*) FROM research.{} WHERE run_id = %s").format(
        sql.Identifier(table)
    )
    async with pool.connection() as conn:
        row = await (await conn.execute(query, (run,))).fetchone()
    assert row is not None
    return int(row[0])


def evidence_input(
    run: str, evidence_id: str = "E001", *, step: int = 0, turn: int = 0, **fields: object
) -> RecordEvidenceInput:
    values: dict[str, object] = {
        "scope": RunScope.tool_of(run, "", step, turn, ""),
        "evidence_id": evidence_id,
        "question_id": "Q1",
        "source_id": "S1",
        "claim": "Invalidation is broadcast.",
        "stance": "supports",
    }
    return RecordEvidenceInput.model_validate(values | fields)


def report_input(run: str, *, answer: str = "They broadcast invalidations.") -> SaveReportInput:
    return SaveReportInput(
        scope=RunScope.end_of(
            run, "", Counters(steps=3, searches=1, page_fetches=1, tokens=120, model_calls=3), ""
        ),
        status=RunStatus.COMPLETED,
        stop_reason=StopReason.COVERAGE_GATE_PASSED,
        report=Report(answer=answer, findings=[Finding(text="Broadcast.", evidence_ids=["E001"])]),
        counters=Counters(steps=3, searches=1, page_fetches=1, tokens=120, model_calls=3),
        finished_at="2025-01-02T03:05:00+00:00",
    )


# ---------------------------------------------------------------- migrations


def test_migrations_apply_once(pg_url: str) -> None:
    assert apply_migrations(pg_url) == []
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT version FROM research.schema_migrations").fetchall()
    assert {row[0] for row in rows} >= {migration.version for migration in migrations()}


def test_concurrent_migrations_take_turns(pg_url: str) -> None:
    database = f"migrate_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(pg_url, autocommit=True) as admin:
        try:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
        except psycopg.errors.InsufficientPrivilege:
            pytest.skip("this PostgreSQL user may not create a scratch database")
    url = psycopg.conninfo.make_conninfo(pg_url, dbname=database)
    results: list[list[str]] = []
    try:
        threads = [threading.Thread(target=lambda: results.append(apply_migrations(url)))]
        threads.append(threading.Thread(target=lambda: results.append(apply_migrations(url))))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(database)))
    assert sorted(version for result in results for version in result) == [
        migration.version for migration in migrations()
    ]


# ---------------------------------------------------------------- idempotent writes


async def test_rewriting_the_same_rows_adds_nothing(
    ledger: Ledger, pool: Pool, run_id: str
) -> None:
    brief = Brief(question="again?", allowed_hosts=["docs.example"])
    step = StepRecord(
        scope=RunScope.record_of(run_id, "", 1, 1, ""), tool="search_web", arguments="{}", ok=True
    )
    decision = Decision(
        tool_calls=[ToolCall(id="c1", name="search_web", arguments='{"query": "cache"}')],
        usage=Usage(input_tokens=10, output_tokens=2),
        model="offline",
    )
    hits = [SearchHit(url="https://docs.example/cache.txt", title="Cache", host="docs.example")]
    for attempt in range(2):
        first = attempt == 0
        assert await ledger.start_run(run_id, brief, STARTED) is False
        assert await ledger.record_step(step) is first
        assert await ledger.record_model_call(run_id, 1, decision, "offline", 500) is first
        assert await ledger.record_search(run_id, 1, "cache", "corpus", hits) == hits
        ref = await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
        result = await record_evidence(ledger, evidence_input(run_id, passage_id="S1.P2"))
        assert ref.id == "S1" and ref.passage_count == len(PARAGRAPHS)
        assert result.error is None
    tables = {"runs": 1, "steps": 1, "model_calls": 1, "searches": 1, "search_results": 1}
    tables |= {"sources": 1, "passages": len(PARAGRAPHS), "evidence": 1}
    for table, expected in tables.items():
        assert await count(pool, table, run_id) == expected, table
    assert await ledger.decisions(run_id) == [decision]
    assert await ledger.recorded_search(run_id, 1) == ("corpus", hits)


async def test_writes_for_a_run_never_started_are_refused(ledger: Ledger) -> None:
    step = StepRecord(
        scope=RunScope.record_of("never-started", "", 1, 1, ""), tool="x", arguments="", ok=False
    )
    with pytest.raises(UnknownRun, match="never-started"):
        await ledger.record_step(step)
    with pytest.raises(UnknownRun):
        await ledger.store_source("never-started", "S1", snapshot(page(), extracted()))


async def test_a_second_source_for_a_stored_url_returns_the_stored_one(
    ledger: Ledger, run_id: str
) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    again = await ledger.store_source(run_id, "S2", snapshot(page(), extracted()))
    assert again.id == "S1"
    assert [source.id for source in await ledger.sources(run_id)] == ["S1"]


async def test_failed_fetch_is_stored_without_snapshot(ledger: Ledger, run_id: str) -> None:
    ref = await ledger.store_failed_source(
        run_id,
        "S1",
        "https://docs.example/gone",
        "failed",
        "HTTP 404 from https://docs.example/gone",
    )
    assert (ref.ok, ref.error, ref.host) == (
        False,
        "HTTP 404 from https://docs.example/gone",
        "docs.example",
    )
    result = await record_evidence(ledger, evidence_input(run_id, quote="anything"))
    assert result.evidence is None and "could not be read" in (result.error or "")


# ---------------------------------------------------------------- evidence


async def test_evidence_for_an_unknown_source_is_refused(
    ledger: Ledger, pool: Pool, run_id: str
) -> None:
    result = await record_evidence(ledger, evidence_input(run_id, source_id="S9", quote="keys"))
    assert result.evidence is None
    assert result.error == "unknown source S9: read the page before recording evidence"
    async with pool.connection() as conn:
        with pytest.raises(psycopg.errors.ForeignKeyViolation, match="evidence_source_fk"):
            await conn.execute(
                "INSERT INTO research.evidence (run_id, evidence_id, question_id, source_id, claim,"
                " stance, quote, start_offset, end_offset)"
                " VALUES (%s, 'E001', 'Q1', 'S9', 'c', 'supports', 'q', 0, 1)",
                (run_id,),
            )
    assert await count(pool, "evidence", run_id) == 0


async def test_a_quote_is_accepted_verbatim_up_to_whitespace(ledger: Ledger, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    quote = "Invalidation  messages travel over a pub/sub channel to   every node"
    result = await record_evidence(ledger, evidence_input(run_id, quote=quote))
    evidence = result.evidence
    assert result.error is None and evidence is not None
    stored = extracted().text
    assert evidence.quote == stored[evidence.start : evidence.end]
    assert evidence.quote == "Invalidation messages travel over a pub/sub channel\nto every node"
    assert evidence.passage_id == "S1.P2"


async def test_a_fabricated_quote_is_refused(ledger: Ledger, pool: Pool, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    result = await record_evidence(
        ledger, evidence_input(run_id, quote="Invalidation messages are never lost.")
    )
    assert result.evidence is None
    assert (result.error or "").startswith("quote not found verbatim in S1 (")
    assert await count(pool, "evidence", run_id) == 0


async def test_a_passage_id_copies_the_stored_text(ledger: Ledger, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    result = await record_evidence(ledger, evidence_input(run_id, passage_id="S1.P3"))
    assert result.evidence is not None and result.evidence.quote == PARAGRAPHS[2]
    unknown = await record_evidence(ledger, evidence_input(run_id, "E002", passage_id="S1.P9"))
    assert unknown.error == "unknown passage S1.P9: source S1 has S1.P1 to S1.P4"
    other = await record_evidence(ledger, evidence_input(run_id, "E003", passage_id="S2.P1"))
    assert (other.error or "").startswith("passage S2.P1 is not in source S1")


async def test_evidence_joins_to_its_source_url(ledger: Ledger, pool: Pool, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    await record_evidence(ledger, evidence_input(run_id, passage_id="S1.P2"))
    await ledger.save_report(report_input(run_id), "# report")
    async with pool.connection() as conn:
        joined = await (
            await conn.execute(
                "SELECT e.evidence_id, e.quote, p.text, s.url"
                " FROM research.evidence e"
                " JOIN research.sources s USING (run_id, source_id)"
                " LEFT JOIN research.passages p USING (run_id, source_id, passage_id)"
                " WHERE e.run_id = %s ORDER BY e.evidence_id",
                (run_id,),
            )
        ).fetchall()
        cited = await (
            await conn.execute(
                "SELECT finding, evidence_id, url FROM research.cited_evidence WHERE run_id = %s",
                (run_id,),
            )
        ).fetchall()
    url = "https://docs.example/cache.txt"
    assert joined == [("E001", PARAGRAPHS[1], PARAGRAPHS[1], url)]
    assert cited == [("Broadcast.", "E001", url)]


async def test_a_stored_source_keeps_its_text_s_sketch(ledger: Ledger, run_id: str) -> None:
    """The gate tells another rendering of a page by its sketch (`workflows.families`): it is
    made once when the page is stored, and every read of the source carries it."""
    stored = snapshot(page(), extracted())
    assert stored.sketch and list(stored.sketch) == sorted(stored.sketch)
    await ledger.store_source(run_id, "S1", stored)
    loaded = await ledger.source(run_id, "S1")
    assert loaded is not None and loaded.ref.sketch == list(stored.sketch)
    assert [source.sketch for source in await ledger.sources(run_id)] == [list(stored.sketch)]


# ---------------------------------------------------------------- windows


async def test_window_pages_through_passages(ledger: Ledger, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    first, next_offset, _ = await ledger.window(run_id, "S1", offset=0, size=2)
    assert [passage.id for passage in first] == ["S1.P1", "S1.P2"]
    assert next_offset == first[-1].end + 2
    rest, end, _ = await ledger.window(run_id, "S1", offset=next_offset or 0, size=2)
    assert [passage.id for passage in rest] == ["S1.P3", "S1.P4"] and end is None
    inside, _, _ = await ledger.window(run_id, "S1", offset=first[1].start + 5, size=1)
    assert [passage.id for passage in inside] == ["S1.P2"]
    assert await ledger.window(run_id, "S1", offset=100_000) == ([], None, False)


async def test_window_stops_at_its_character_budget_but_shows_one_passage(
    ledger: Ledger, run_id: str
) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    sizes = [len(paragraph) for paragraph in PARAGRAPHS]

    two, next_offset, _ = await ledger.window(run_id, "S1", size=6, chars=sizes[0] + sizes[1])
    assert [passage.id for passage in two] == ["S1.P1", "S1.P2"]
    assert next_offset == two[-1].end + 2
    one, _, _ = await ledger.window(run_id, "S1", size=6, chars=1)
    assert [passage.id for passage in one] == ["S1.P1"], "a window is never empty"
    every, end, _ = await ledger.window(run_id, "S1", size=6, chars=sum(sizes))
    assert len(every) == len(PARAGRAPHS) and end is None


async def test_window_find_keeps_matching_passages(ledger: Ledger, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    found, next_offset, more = await ledger.window(run_id, "S1", find="CACHE", size=1)
    assert [passage.id for passage in found] == ["S1.P1"] and more, "P4 holds it too"
    later, end, more = await ledger.window(
        run_id, "S1", offset=next_offset or 0, find="cache", size=5
    )
    assert [passage.id for passage in later] == ["S1.P4"] and end is None and not more
    assert await ledger.window(run_id, "S1", find="no such words") == ([], None, False)


async def test_window_find_falls_back_to_each_word_only_when_no_passage_holds_the_phrase(
    ledger: Ledger, run_id: str
) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(), extracted()))
    every, end, _ = await ledger.window(run_id, "S1", find="Database CACHE")
    assert [passage.id for passage in every] == ["S1.P4"] and end is None
    whole, _, _ = await ledger.window(run_id, "S1", find="a message")
    assert [passage.id for passage in whole] == ["S1.P3"], "the phrase, not each word"
    # the same find pages on with the same meaning: the phrase is held on the page, not later
    after, _, _ = await ledger.window(run_id, "S1", offset=whole[0].end + 1, find="a message")
    assert after == []


HEADED = [
    "Queues retry failed messages.\n\nRetry budget",  # a passage ending in the next heading
    "Each queue may retry at most 100 messages a minute.",
    "Dead letters are kept for 14 days.",
]


def headed() -> Extracted:
    text = "\n\n".join(HEADED)
    snapshot = extract(text.encode("utf-8"), "text/plain; charset=utf-8", max_chars=10_000)
    spans, start = [], 0
    for passage in HEADED:
        spans.append(PassageSpan(start=start, end=start + len(passage), section=""))
        start += len(passage) + 2
    return dataclasses.replace(snapshot, passages=spans)


async def test_window_find_on_a_heading_shows_the_text_under_it(
    ledger: Ledger, run_id: str
) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(text="\n\n".join(HEADED)), headed()))
    found, next_offset, more = await ledger.window(run_id, "S1", find="retry budget", size=5)
    assert [passage.id for passage in found] == ["S1.P1", "S1.P2"], "the heading and its text"
    assert not more, "the text under the heading is no further match"
    third, _, _ = await ledger.window(run_id, "S1", offset=next_offset or 0, size=1)
    assert next_offset is not None and [passage.id for passage in third] == ["S1.P3"]
    # a window of one shows the heading; what follows is the text under it, not a match
    heading, _, more = await ledger.window(run_id, "S1", find="retry budget", size=1)
    assert [passage.id for passage in heading] == ["S1.P1"] and not more


async def test_window_find_always_says_where_reading_goes_on(ledger: Ledger, run_id: str) -> None:
    await ledger.store_source(run_id, "S1", snapshot(page(text="\n\n".join(HEADED)), headed()))
    found, next_offset, more = await ledger.window(run_id, "S1", find="queues retry", size=5)
    assert [passage.id for passage in found] == ["S1.P1"], "a match in the text, not a heading"
    assert not more, "where reading goes on is no further match"
    after, _, _ = await ledger.window(run_id, "S1", offset=next_offset or 0, size=1)
    assert next_offset is not None and [passage.id for passage in after] == ["S1.P2"]
    last, end, _ = await ledger.window(run_id, "S1", find="dead letters", size=5)
    assert [passage.id for passage in last] == ["S1.P3"] and end is None, "the page's end"


# ---------------------------------------------------------------- reports


async def test_saving_a_report_twice_changes_nothing(
    ledger: Ledger, pool: Pool, run_id: str
) -> None:
    assert await ledger.save_report(report_input(run_id), "# first") is True
    assert await ledger.save_report(report_input(run_id, answer="other"), "# second") is False
    run = await ledger.run(run_id)
    assert run is not None
    assert (run.status, run.stop_reason, run.version) == (
        RunStatus.COMPLETED,
        "coverage_gate_passed",
        2,
    )
    assert run.counters.tokens == 120 and run.finished_at is not None
    assert await ledger.report(run_id) == "# first"
    assert await count(pool, "reports", run_id) == 1
    assert await ledger.report("no-such-run") is None


# ---------------------------------------------------------------- the corpus


@pytest.fixture
async def tag(pool: Pool) -> AsyncIterator[str]:
    """A unique host-name tag; the corpus documents indexed under it are removed afterwards."""
    value = uuid.uuid4().hex[:10]
    yield value
    async with pool.connection() as conn:
        await conn.execute(
            "DELETE FROM research.corpus_documents WHERE host LIKE %s", (f"%{value}.test",)
        )


def write_corpus(root: Path, host: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / host / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


async def test_corpus_search_matches_any_word_best_first(
    ledger: Ledger, tmp_path: Path, tag: str
) -> None:
    host, other = f"docs.c{tag}.test", f"other{tag}.test"
    write_corpus(tmp_path, host, {
        "both.md": "# Hybrid caching\n\nHybrid cache invalidation uses pub/sub messages.",
        "one.txt": "Cache sizing\n\nA cache is sized by its working set.",
        "none.html": "<title>Unrelated</title><p>Gardening tips for spring.</p>",
        "_draft.md": "cache invalidation draft",
        "notes/.hidden.md": "cache invalidation hidden",
    })  # fmt: skip
    write_corpus(tmp_path, other, {"elsewhere.md": "Hybrid cache invalidation elsewhere."})
    assert await index_corpus(ledger, tmp_path, max_chars=10_000) == 4
    search = CorpusSearch(ledger)
    question = "How does hybrid cache invalidation work?"
    hits = await search.search(question, [f"*.c{tag}.test"], 10)
    assert [hit.url for hit in hits] == [f"https://{host}/both.md", f"https://{host}/one.txt"]
    assert hits[0].title == "Hybrid caching" and hits[0].host == host
    assert "invalidation" in hits[0].snippet and "<b>" not in hits[0].snippet
    assert [hit.host for hit in await search.search(question, [other], 10)] == [other]
    assert await search.search(question, [f"c{tag}.test"], 10) == []
    assert await search.search("the of and", [host], 10) == []
    assert await search.search("   ", [host], 10) == []


async def test_reindexing_refreshes_changed_documents(
    ledger: Ledger, tmp_path: Path, tag: str
) -> None:
    host = f"r{tag}.test"
    write_corpus(tmp_path, host, {"page.md": "Original wording about latency."})
    await index_corpus(ledger, tmp_path, max_chars=10_000)
    write_corpus(tmp_path, host, {"page.md": "Rewritten wording about throughput."})
    assert await index_corpus(ledger, tmp_path, max_chars=10_000) == 1
    assert await ledger.search_corpus("latency", [host], 5) == []
    assert [hit.url for hit in await ledger.search_corpus("throughput", [host], 5)] == [
        f"https://{host}/page.md"
    ]


async def test_a_run_id_owned_by_another_execution_is_refused(ledger: Ledger) -> None:
    """A workflow id reused by a later execution must not read or extend the earlier rows."""
    run = f"reuse-{uuid.uuid4().hex[:12]}"
    brief = Brief(question="How do hybrid caches invalidate?", allowed_hosts=["docs.example"])
    assert await ledger.start_run(run, brief, STARTED, execution_id="exec-1") is True
    assert await ledger.start_run(run, brief, STARTED, execution_id="exec-1") is False  # retry
    with pytest.raises(RunIdTaken, match="already holds an earlier investigation"):
        await ledger.start_run(run, brief, STARTED, execution_id="exec-2")


async def test_a_recorded_model_turn_reads_back_as_recorded(ledger: Ledger, run_id: str) -> None:
    decision = Decision(
        tool_calls=[ToolCall(id="c1", name="search_web", arguments='{"query": "cache"}')],
        usage=Usage(input_tokens=10, output_tokens=2, estimated=True),
        model="m",
    )
    assert await ledger.decision(run_id, 1) is None
    await ledger.record_model_call(run_id, 1, decision, "openai", 500)
    assert await ledger.decision(run_id, 1) == decision


async def test_corpus_search_weighs_page_names_titles_and_rare_words(
    ledger: Ledger, tmp_path: Path, tag: str
) -> None:
    host = f"w{tag}.test"
    write_corpus(tmp_path, host, {
        "typing.html": "<title>typing — Support for type hints</title>"
                       "<p>Optional[X] is equivalent to X | None.</p>",
        "tutorial.html": "<title>A tutorial</title><p>" + "Optional arguments are optional. " * 20
                         + "Typing is fast.</p>",
        "misc.html": "<title>Misc</title><p>What does it mean? It means nothing.</p>",
    })  # fmt: skip
    await index_corpus(ledger, tmp_path, max_chars=10_000)

    hits = await ledger.search_corpus("What does typing.Optional mean?", [host], 8)

    assert hits and hits[0].url == f"https://{host}/typing.html", [hit.url for hit in hits]
    assert "Optional" in hits[0].snippet


async def test_corpus_search_weighs_words_by_their_rarity_on_the_hosts_searched(
    ledger: Ledger, pool: Pool, tmp_path: Path, tag: str
) -> None:
    """A word on every page of another host is as rare as the host searched has it: on `docs`,
    "beta" is on one page as "alpha" is, so the page saying it twice ranks first (counted over
    both hosts, "beta" would weigh next to nothing and "alpha" win)."""
    docs, other = f"d{tag}.test", f"o{tag}.test"
    write_corpus(tmp_path / "a", docs, {
        "one.html": "<title>One</title><p>The gamma setting takes alpha as its value.</p>",
        "two.html": "<title>Two</title><p>The delta setting takes beta, and beta only.</p>",
        "three.html": "<title>Three</title><p>The epsilon setting takes nothing at all.</p>",
    })  # fmt: skip
    write_corpus(
        tmp_path / "b",
        other,
        {
            f"p{n}.html": f"<title>Page {n}</title><p>Beta release {n} of the beta channel.</p>"
            for n in range(40)
        },
    )
    await index_corpus(ledger, tmp_path / "a", max_chars=10_000)
    await index_corpus(ledger, tmp_path / "b", max_chars=10_000)

    hits = await ledger.search_corpus("alpha or beta?", [docs], 8)

    assert [hit.url for hit in hits] == [f"https://{docs}/two.html", f"https://{docs}/one.html"]
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT host, ndoc FROM research.corpus_terms WHERE lexeme = 'beta' AND host IN "
            "(%s, %s) ORDER BY host",
            (docs, other),
        )
        assert await cursor.fetchall() == [(docs, 1), (other, 40)]


async def test_corpus_search_finds_identifiers_with_underscores_whole(
    ledger: Ledger, tmp_path: Path, tag: str
) -> None:
    """PostgreSQL's parser splits `most_common` into a stop word and "common", `wait_for` into
    "wait" and a stop word: indexed whole too, the page that uses the identifier outranks pages
    that only use its words."""
    host = f"u{tag}.test"
    # Other pages make "common" and "wait" ordinary words, as in a real corpus.
    others = {f"p{n}.html": f"<p>A common case: wait, number {n}.</p>" for n in range(20)}
    write_corpus(tmp_path, host, others | {
        "words.html": "<title>Common words</title><p>The most common words are common.</p>",
        "counter.html": "<title>Counter</title><p>most_common(n) lists the n largest counts.</p>",
        "waiting.html": "<title>Waiting</title><p>Wait for the reply; wait for it again.</p>",
        "tasks.html": "<title>Tasks</title><p>asyncio.wait_for(aw, timeout) runs aw.</p>",
    })  # fmt: skip
    await index_corpus(ledger, tmp_path, max_chars=10_000)

    hits = await ledger.search_corpus("What does most_common return?", [host], 8)
    assert hits[0].url == f"https://{host}/counter.html", [hit.url for hit in hits]
    assert "most_common" in hits[0].snippet
    hits = await ledger.search_corpus("When does wait_for time out?", [host], 8)
    assert hits[0].url == f"https://{host}/tasks.html", [hit.url for hit in hits]


async def test_corpus_search_snippets_show_the_term_as_a_word_in_any_case(
    ledger: Ledger, tmp_path: Path, tag: str
) -> None:
    """The snippet sits where the rarest term first appears as a word, whatever its case: at
    "RLock" for the lexeme "rlock", at "lock" and not inside "blocking"."""
    host = f"s{tag}.test"
    filler = " ".join(["Threads share memory and run in turn."] * 60)
    write_corpus(tmp_path, host, {
        "rlock.html": f"<title>Reentrant</title><p>Blocking calls wait. {filler} "
                      "An RLock may be acquired again by the thread that holds it.</p>",
        "lock.html": f"<title>Primitive</title><p>Blocking calls wait. {filler} "
                     "A lock is held by one thread at a time.</p>",
    })  # fmt: skip
    await index_corpus(ledger, tmp_path, max_chars=10_000)

    hits = await ledger.search_corpus("What is an RLock?", [host], 8)
    assert hits[0].url == f"https://{host}/rlock.html" and "RLock may be" in hits[0].snippet
    hits = await ledger.search_corpus("What is a lock?", [host], 8)
    snippets = {hit.url.rsplit("/", 1)[1]: hit.snippet for hit in hits}
    assert "lock is held" in snippets["lock.html"], snippets


async def test_corpus_search_can_use_the_gin_index(pool: Pool) -> None:
    from activities.ledger.corpus import _SEARCH, search_params

    params = search_params("cache invalidation", ["docs.example"], 8)
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_seqscan = off")  # a tiny table would be scanned
        cursor = await conn.execute(b"EXPLAIN " + _SEARCH.encode(), params)
        plan = "\n".join(str(row[0]) for row in await cursor.fetchall())
    assert "corpus_documents_tsv" in plan, plan


async def test_corpus_search_weighs_index_pages_down(
    ledger: Ledger, tmp_path: Path, tag: str
) -> None:
    host = f"x{tag}.test"
    entries = " ".join(f"<li>retry {n}, backoff {n}, jitter {n}</li>" for n in range(20))
    write_corpus(tmp_path, host, {
        "genindex.html": f"<title>Index: retry</title><ul>{entries}</ul>",
        "notes.html": "<title>Notes</title><p>A retry waits for the backoff, and the jitter is "
                      "added to it so that the clients do not all come back at the same time.</p>",
    })  # fmt: skip
    await index_corpus(ledger, tmp_path, max_chars=10_000)

    hits = await ledger.search_corpus("How do retry, backoff and jitter work?", [host], 8)

    assert [hit.url for hit in hits] == [
        f"https://{host}/notes.html",
        f"https://{host}/genindex.html",
    ]

"""Near-duplicate corpus pages collapse to one search result, the others listed under it."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from activities.ledger import Ledger
from activities.search import CorpusSearch, index_corpus
from activities.search.corpus import CorpusDocument, mark_duplicates
from runtime.database import Pool
from workflows.tools.search_web import search_data

FILLER = (
    "The resolver reads its configuration once at start and keeps every answer for the time the "
    "record allows, then asks again; each step is logged with the query name and the server."
)


def _release(number: int) -> str:
    """A release-notes page: the same shape and most of the text, one line of its own."""
    return (
        f"# Widget {number}.0 release notes\n\n{FILLER}\n\n"
        f"Widget {number}.0 fixes the cache eviction bug number {number * 17}.\n\n{FILLER}"
    )


def _topic(name: str) -> str:
    return f"# {name.title()}\n\nHow {name} interacts with cache eviction in widget: {FILLER}"


@pytest.fixture
async def host(pool: Pool) -> AsyncIterator[str]:
    value = f"d{uuid.uuid4().hex[:10]}.test"
    yield value
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM research.corpus_documents WHERE host = %s", (value,))


def _write(root: Path, host: str, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / host / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


async def test_near_duplicates_collapse_and_distinct_pages_fill_the_results(
    ledger: Ledger, tmp_path: Path, host: str
) -> None:
    files = {f"notes/r{n}.md": _release(n) for n in range(1, 11)}  # ten release pages
    files |= {f"topic-{name}.md": _topic(name) for name in ("sizing", "expiry", "locking")}
    files["eviction.md"] = "# Cache eviction\n\n" + "Widget cache eviction drops the oldest. " * 5
    files["ch14.md"] = files["eviction.md"]  # the same chapter under a second name
    _write(tmp_path, host, files)
    assert await index_corpus(ledger, tmp_path, max_chars=10_000) == len(files)
    hits = await CorpusSearch(ledger).search("widget cache eviction", [host], 5)
    urls = [hit.url for hit in hits]
    assert len(urls) == 5 == len(set(urls))
    releases = [hit for hit in hits if "/notes/" in hit.url]
    assert len(releases) == 1  # one result for the ten release pages
    assert sorted([*releases[0].also, releases[0].url]) == sorted(
        f"https://{host}/{name}" for name in files if name.startswith("notes/")
    )
    chapter = [hit for hit in hits if hit.url.endswith(("/eviction.md", "/ch14.md"))]
    assert len(chapter) == 1 and len(chapter[0].also) == 1
    assert {chapter[0].url, *chapter[0].also} == {
        f"https://{host}/eviction.md",
        f"https://{host}/ch14.md",
    }
    topics = [hit for hit in hits if "/topic-" in hit.url]
    assert len(topics) == 3 and all(hit.also == [] for hit in topics)  # distinct pages reach it
    shown = search_data(hits).model_dump()["results"]
    assert [item.get("also") for item in shown] == [hit.also or None for hit in hits]


def _doc(url: str, title: str, body: str) -> CorpusDocument:
    return CorpusDocument(url=f"https://h.test/{url}", host="h.test", title=title, body=body)


def test_duplicates_are_decided_by_text_not_by_name() -> None:
    body = " ".join(f"word{k}" for k in range(200))
    other = " ".join(f"other{k}" for k in range(200))
    marked = mark_duplicates([
        _doc("a/one.html", "Guide", body),
        _doc("b/two.html", "Another name", body),  # same text, other title and path: duplicate
        _doc("a/one-v2.html", "Guide", other),  # same title, other text: distinct
        _doc("notes/1.html", "Release 1.0", f"{body} fixes bug 1"),
        _doc("notes/2.html", "Release 2.0", f"{body} fixes bug 2"),  # titles alike, text alike
        _doc("stub1.html", "Stub", "see elsewhere"),
        _doc("stub2.html", "Stub", "see elsewhere"),  # a stub: too short to call the same page
    ])  # fmt: skip
    clusters = [document.cluster for document in marked]
    first = "https://h.test/a/one.html"
    notes = "https://h.test/notes/1.html"
    assert clusters == [first, first, None, notes, notes, None, None]


async def test_heading_words_weigh_more_than_body_words(
    ledger: Ledger, tmp_path: Path, host: str
) -> None:
    _write(tmp_path, host, {
        # the same words but the title (alike titles with this overlap would be one cluster),
        # "eviction" once in each: in a body sentence, or as a section heading
        "a-body.md": f"# Widget notes\n\n## Sizing\n\nOld entries go first on eviction. {FILLER}",
        "b-heading.md": "# Gadget notes\n\n## Eviction\n\nOld entries go first on sizing. "
        + FILLER,
    })  # fmt: skip
    await index_corpus(ledger, tmp_path, max_chars=10_000)
    hits = await CorpusSearch(ledger).search("eviction", [host], 5)
    assert [hit.url for hit in hits] == [
        f"https://{host}/b-heading.md",
        f"https://{host}/a-body.md",
    ]


async def test_a_long_reference_page_with_a_section_on_the_word_outranks_a_passing_mention(
    ledger: Ledger, tmp_path: Path, host: str
) -> None:
    """httpd's core.html defines a hundred directives, `LimitRequestBody` among them: its section
    on the word ranks above a page that mentions it in passing."""
    sections = "".join(
        f"## Setting{n} Directive\n\nSetting{n} sets how it behaves. {FILLER} {FILLER}\n\n"
        for n in range(150)
    )
    _write(tmp_path, host, {
        "core.md": "# Core settings\n\n" + sections
        + f"## Evictionlimit Directive\n\nEvictionlimit sets how many entries stay. {FILLER}\n\n",
        "gadget.md": f"# Gadget notes\n\nThe gadget honours Evictionlimit. {FILLER * 8} "
        f"Evictionlimit too. {FILLER * 8}",
    })  # fmt: skip
    await index_corpus(ledger, tmp_path, max_chars=2_000_000)
    hits = await CorpusSearch(ledger).search("Evictionlimit", [host], 5)
    assert [hit.url for hit in hits] == [f"https://{host}/core.md", f"https://{host}/gadget.md"]

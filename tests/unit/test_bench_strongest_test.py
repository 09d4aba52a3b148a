"""bench.strongest_test: the strongest test asked of every excerpt of the labelled answer pages."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from activities.pages.corpus_transport import CorpusTransport
from baselines.golden import GoldenBrief, GoldenSet, load_golden, plain
from bench.strongest_test import Corpus, _families, corpus_pages, measure
from runtime.settings import PROJECT_ROOT
from workflows.families import sketch, words
from workflows.models import SourceRef

DEMO = PROJECT_ROOT / "examples" / "golden" / "demo.json"


def test_every_labelled_page_of_the_demo_set_is_read_and_each_question_has_a_true_pass() -> None:
    tally = measure(DEMO, max_chars=200_000)
    assert tally is not None
    assert tally.questions == 2 and tally.pages_missing == 0
    assert tally.recalled == 2, "the answering sentence of each question passes"
    assert tally.false_passes == len(tally.listing) > 0
    for line in tally.listing:  # each a passing quote without its question's phrase
        name, _, said, _, quote = line.split(" | ", 4)
        assert name == "demo.json" and plain(said.removeprefix("phrase: ")) not in plain(quote)


def test_a_set_whose_corpus_is_not_installed_is_skipped(tmp_path: Path) -> None:
    golden = tmp_path / "set.json"
    golden.write_text(DEMO.read_text().replace('"../corpus"', '"/nonexistent/corpus"'))
    assert measure(golden, max_chars=200_000) is None


def test_a_phrase_is_compared_as_research_eval_reads_it() -> None:
    assert plain("With `git  clean`\u2019s\nhelp") == "with git clean's help"


def test_a_brief_is_answerable_from_two_sources_only_when_its_pages_are_two_families() -> None:
    tally = measure(DEMO, max_chars=200_000)
    assert tally is not None
    # demo.json's second brief labels no phrase: only the first is measured, and its pages
    # make two families (the dead-letter guide and its mirror on another host are one)
    assert (tally.briefs, tally.answerable, tally.two_sources) == (1, 1, 1)
    page = _page("page", words("a b c d e f g h " * 20))
    rendering = _page("rendering", words("a b c d e f g h " * 20 + "footer"))
    other = _page("other", words("one two three four five six seven eight nine ten " * 5))
    assert _families([page, rendering]) == 1, "another rendering of a page is the same source"
    assert _families([page, other]) == 2
    assert _families([page, other, rendering]) == 2
    assert _families([]) == 0
    # a chain: A and C share little, B much with each, so the three are one family (in any
    # order) as the gate chains them
    text = [f"w{n}" for n in range(400)]
    a, b, c = _page("a", text[0:200]), _page("b", text[50:250]), _page("c", text[100:300])
    assert _families([a, c, b]) == 1 and _families([a, c]) == 2


def test_the_whole_corpus_is_every_page_the_index_reads(tmp_path: Path) -> None:
    for name in ["a.html", "guide/b.md", "notes.txt", "_sources/a.rst.txt", ".cache/c.html",
                 "manual.pdf", "style.css"]:  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("text")
    one_host = GoldenSet.model_validate({**load_golden(DEMO).model_dump(), "host": "docs.example"})
    assert [url for url, _ in corpus_pages(one_host, tmp_path)] == [
        "https://docs.example/a.html",
        "https://docs.example/guide/b.md",
        "https://docs.example/notes.txt",
    ]
    # without a host, a folder per host (the demo corpus)
    demo = load_golden(DEMO)
    urls = [url for url, _ in corpus_pages(demo, PROJECT_ROOT / "examples" / "corpus")]
    assert "https://mirror.opendocs.example/harborq/dead-letter-queues.html" in urls
    assert all(url.startswith("https://") and "/_" not in url for url in urls)


def test_beyond_the_labelled_pages_a_brief_is_measured_on_every_page_of_its_corpus() -> None:
    tally = measure(DEMO, max_chars=200_000)
    assert tally is not None
    # one brief measured, from two sources on its labelled pages; the whole corpus adds pages
    # (the visibility-timeout concept page is cited too, the release notes hold a phrase), but
    # a brief counts once
    assert (tally.two_sources, tally.anywhere, tally.phrase_twice) == (1, 1, 1)
    demo = load_golden(DEMO)
    entry = demo.briefs[0]
    first, *others = entry.questions
    unsaid = entry.model_copy(
        update={"questions": [first.model_copy(update={"phrase": "no page says this"}), *others]}
    )
    assert asyncio.run(_phrase_pages(demo, entry)), "the labelled phrases are on its pages"
    assert asyncio.run(_phrase_pages(demo, unsaid)) == [], "one question's phrase on no page"


async def _phrase_pages(golden: GoldenSet, entry: GoldenBrief) -> list[SourceRef]:
    folder = PROJECT_ROOT / "examples" / "corpus"
    corpus = Corpus(corpus_pages(golden, folder), 200_000)
    async with httpx.AsyncClient(transport=CorpusTransport(folder)) as client:
        return await corpus.phrase_pages(golden, entry, client)


def _page(name: str, text: list[str]) -> SourceRef:
    return SourceRef(id=name, url=f"https://docs.example/{name}.html", sketch=sketch(text))

"""The offline policy's strongest test on every excerpt of the pages that answer, not only on
what a run happened to read.

    .venv/bin/python -m bench.strongest_test [GOLDEN.json ...] [--list PATH]

A run's outcome depends on which passages it reads: a change to search or `find` that shows the
policy other sentences moves completions and wrong completions between runs even when the test
(`baselines.excerpts.says_answer`) has not changed (issue 24). This bench takes the policy's path
out: for every required sub-question of the golden sets whose corpus is installed (default: every
set of examples/golden/), it extracts each labelled page as `read_page` would, builds every
excerpt the policy could quote there (`_excerpts`, as `best_excerpt` does, the host's evidence
rules included) and asks the strongest test of each. An excerpt holding the labelled answer
phrase (`research eval`'s reading: case, spaces, backticks and curly quotes aside) that passes is
a **true pass**; one that passes without it is a **false pass**: a sentence on the very page
that answers which the policy would settle the question with, although it does not hold the
answer (some are paraphrases the phrase misses: `--list` writes each one for a reader to judge).
Per set: questions, questions with a true pass (the test's recall: the policy can settle them
correctly once it reads there), questions with a false pass (exposure: a read of the wrong
passage of the right page settles them wrongly), and the excerpts behind both. And per brief,
what its labelled pages alone allow: briefs **answerable** (every required question has a true
pass) and of those the briefs whose labelled pages the policy would cite (an excerpt passes the
test, or says what a further source must: `answers`) make **two sources** (two source families
of the gate's rule 3: a page and its other rendering are one): about the most a policy reading
only labelled pages could complete. Beyond them, every page of the corpus that the index reads
and that holds the question's most specific word: of the answerable briefs, those whose pages
the policy would cite **anywhere** in the corpus make two families (a page cited for a false
pass counts; a brief the labelled pages do not make answerable is not counted), and of every
measured brief, those whose labelled phrases, all questions together, the pages of two families
hold, the test aside (**phrases on two sources**: a test passing those sentences could cite two
sources, as rule 3 counts them per report; it does not say each answer is written twice).
Figures only, written dated to bench/results/strongest_test.json.
"""

from __future__ import annotations

import argparse
import asyncio
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from activities.pages.corpus_transport import CorpusTransport
from activities.pages.extract import content_hash, extract
from activities.search.corpus import corpus_hosts, indexed_path
from baselines.excerpts import (
    Excerpt,
    Passage,
    Wanted,
    answers,
    every_excerpt,
    says_answer,
    wanted_words,
)
from baselines.golden import (
    GoldenBrief,
    GoldenQuestion,
    GoldenSet,
    corpus_folder,
    load_golden,
    plain,
)
from runtime.settings import PROJECT_ROOT, Settings
from starter.figures import Measurement
from workflows.contracts import DecideInput
from workflows.families import sketch, words
from workflows.gate import source_families
from workflows.models import Budget, SourceRef
from workflows.scope import RunScope
from workflows.substance import evidence_problem

GOLDEN_DIR = PROJECT_ROOT / "examples" / "golden"


@dataclass
class Tally:
    questions: int = 0
    pages_missing: int = 0  # labelled pages the installed package does not hold
    recalled: int = 0  # questions with a true pass
    exposed: int = 0  # questions with a false pass
    true_passes: int = 0  # distinct excerpts
    false_passes: int = 0
    briefs: int = 0  # with a required question labelled with a phrase
    answerable: int = 0  # every required question with a true pass
    two_sources: int = 0  # of those, true passes from two source families
    anywhere: int = 0  # of the answerable, two families of pages cited from the whole corpus
    phrase_twice: int = 0  # briefs whose phrases pages of two families hold, the test aside
    listing: list[str] = field(default_factory=list)

    def row(self) -> dict[str, int]:
        return {key: value for key, value in self.__dict__.items() if key != "listing"}


def wanted_for(golden: GoldenSet, entry: GoldenBrief, question: GoldenQuestion) -> Wanted:
    """What the policy looks for, from the brief as a run would start it."""
    brief = golden.brief(entry)
    request = DecideInput(
        scope=RunScope.turn_of("bench", "", 1, 0, ""),
        brief=brief,
        transcript=[],
        budget=Budget(steps_left=20, searches_left=4, pages_left=6, tokens_left=100_000),
    )
    return wanted_words(next(q for q in brief.questions if q.id == question.id), request)


async def page_passages(
    client: httpx.AsyncClient, url: str, source_id: str, max_chars: int
) -> dict[str, Passage]:
    """The page's passages as `read_page` stores them, served as a run reads it (the corpus
    transport: index.html, _redirects.json); {} when it is not there."""
    response = await client.get(url, follow_redirects=True)
    if response.status_code != httpx.codes.OK:
        return {}
    page = extract(response.content, response.headers["content-type"], max_chars=max_chars)
    host = response.url.host
    return {
        f"{source_id}.P{n}": Passage(
            source_id, page.text[span.start : span.end], span.section, page.title, span.start, host
        )
        for n, span in enumerate(page.passages, start=1)
    }


def passing(wanted: Wanted, excerpts: list[Excerpt]) -> Iterator[Excerpt]:
    """Every excerpt of `excerpts` (what the policy could quote from a page, `every_excerpt`)
    that the host would accept as evidence and the strongest test passes (each quote once)."""
    seen: set[str] = set()
    for excerpt in excerpts:
        quote = " ".join(excerpt.quote.split())
        if quote in seen:
            continue
        seen.add(quote)
        problem = evidence_problem(
            excerpt.quote, excerpt.context, excerpt.claim, wanted.terms, wanted.question
        )
        if problem is None and says_answer(excerpt, wanted):
            yield excerpt


def measure(path: Path, max_chars: int) -> Tally | None:
    """The set's tally, or None when its corpus is not installed here."""
    golden = load_golden(path)
    folder = corpus_folder(golden, path, None)
    if folder is None or not folder.is_dir():
        return None
    transport = CorpusTransport(folder, {golden.host: folder} if golden.host else None)
    corpus = Corpus(corpus_pages(golden, folder), max_chars)
    return asyncio.run(_measure(path.name, golden, transport, corpus, max_chars))


async def _measure(
    name: str, golden: GoldenSet, transport: CorpusTransport, corpus: Corpus, max_chars: int
) -> Tally:
    tally = Tally()
    async with httpx.AsyncClient(transport=transport) as client:
        for entry in golden.briefs:
            answering: list[dict[str, SourceRef]] = []  # per question: the pages it cites
            for question in entry.questions:
                if question.required and question.phrase:
                    answering.append(
                        await _count(name, golden, entry, question, client, max_chars, tally)
                    )
            tally.briefs += bool(answering)  # a brief with no phrase to look for is not measured
            if answering:
                phrased = await corpus.phrase_pages(golden, entry, client)
                tally.phrase_twice += _families(phrased) >= TWO_SOURCES
            if answering and all(answering):
                tally.answerable += 1
                pages = {page: kept for found in answering for page, kept in found.items()}
                tally.two_sources += _families(list(pages.values())) >= TWO_SOURCES
                cited = await corpus.sources(golden, entry, client)
                tally.anywhere += _families(cited) >= TWO_SOURCES
    return tally


TWO_SOURCES = 2  # the gate's default min_sources


def _families(pages: list[SourceRef]) -> int:
    """How many source families these pages make, as the gate counts them (rule 3,
    `workflows.gate.source_families`: a mirror or another rendering of a page is one)."""
    return len(source_families([page.id for page in pages], {page.id: page for page in pages}))


async def _count(
    name: str,
    golden: GoldenSet,
    entry: GoldenBrief,
    question: GoldenQuestion,
    client: httpx.AsyncClient,
    max_chars: int,
    tally: Tally,
) -> dict[str, SourceRef]:
    """One question's true and false passes on its labelled pages, added to `tally`; when it
    has a true pass, the pages the policy would cite for it (an excerpt passes the test, or
    says what a further source must: `answers`), each as the gate would know it."""
    tally.questions += 1
    answering: dict[str, SourceRef] = {}
    wanted = wanted_for(golden, entry, question)
    phrase = plain(question.phrase or "")
    true = false = 0
    for number, page in enumerate(question.pages, start=1):
        passages = await page_passages(client, golden.url(page), f"S{number}", max_chars)
        tally.pages_missing += not passages
        excerpts = [excerpt for _, excerpt in every_excerpt(wanted, passages)]
        passed = list(passing(wanted, excerpts))
        if passed or any(answers(excerpt, wanted) for excerpt in excerpts):
            answering[page] = _source(page, passages)  # a source the policy would cite
        for excerpt in passed:
            if phrase in plain(excerpt.quote):
                true += 1
                continue
            false += 1
            tally.listing.append(
                f"{name} | {question.text} | phrase: {question.phrase} | {page} | "
                f"{' '.join(excerpt.quote.split())}"
            )
    tally.true_passes += true
    tally.false_passes += false
    tally.recalled += true > 0
    tally.exposed += false > 0
    return answering if true else {}


def corpus_pages(golden: GoldenSet, folder: Path) -> list[tuple[str, Path]]:
    """Every page of the set's corpus that `research corpus index` reads (`indexed_path`), its
    address and file, but PDFs (the raw-text filter of `Corpus` cannot see into them). A set with
    a host has its folder; one without has a folder per host (`corpus_hosts`)."""
    hosts = [(golden.host, folder)] if golden.host else corpus_hosts(folder)
    return [
        (f"https://{host}/{relative}", path)
        for host, root in hosts
        for path in sorted(root.rglob("*"))
        if path.suffix.lower() != ".pdf" and (relative := indexed_path(root, path)) is not None
    ]


class Corpus:
    """The whole corpus of a set, for the ceiling beyond labelled pages: per answerable brief,
    the pages anywhere in it that would make its sources. Only pages whose file holds the
    question's most specific word (the last part of each name it asks about, else its first
    lead word) are extracted, each once: an approximation (a lead word of quantity need not be
    said, and a stem such as `retry` is not in "retried"), which misses no page any golden
    question answers on today."""

    def __init__(self, pages: list[tuple[str, Path]], max_chars: int) -> None:
        self._pages = pages
        self._max_chars = max_chars
        self._raw: dict[str, str] = {}  # address: the file's text, lower-cased
        self._passages: dict[str, dict[str, Passage]] = {}  # address: as `read_page` stores it

    async def sources(
        self, golden: GoldenSet, entry: GoldenBrief, client: httpx.AsyncClient
    ) -> list[SourceRef]:
        """The pages of the corpus the policy would cite for a required question of the brief,
        as `_count` has them on labelled pages: an excerpt passes the test or says what a
        further source must (`answers`), whether or not it holds the phrase."""
        cited: dict[str, SourceRef] = {}
        for question in entry.questions:
            if not (question.required and question.phrase):
                continue
            wanted = wanted_for(golden, entry, question)
            for url in self._holding(_most_specific(wanted)):
                passages = await self._read(client, url)
                excerpts = [excerpt for _, excerpt in every_excerpt(wanted, passages)]
                if any(passing(wanted, excerpts)) or any(answers(e, wanted) for e in excerpts):
                    cited[url] = _source(url, passages)
        return list(cited.values())

    async def phrase_pages(
        self, golden: GoldenSet, entry: GoldenBrief, client: httpx.AsyncClient
    ) -> list[SourceRef]:
        """The pages of the corpus whose text holds a required question's phrase, all questions
        together (none when one such question's phrase is on no page): the sources a test
        passing the labelled sentences could cite, whatever this test makes of them."""
        found: dict[str, SourceRef] = {}
        for question in entry.questions:
            if not (question.required and question.phrase):
                continue
            phrase = plain(question.phrase)
            longest = max(re.findall(r"\w+", phrase), key=len, default=phrase)
            holding = {}
            for url in self._holding([longest]):
                passages = await self._read(client, url)
                if phrase in plain(" ".join(passage.text for passage in passages.values())):
                    holding[url] = _source(url, passages)
            if not holding:
                return []
            found.update(holding)
        return list(found.values())

    def _holding(self, words: list[str]) -> Iterator[str]:
        for url, path in self._pages:
            if url not in self._raw:
                self._raw[url] = path.read_text(encoding="utf-8", errors="replace").lower()
            if all(word in self._raw[url] for word in words):
                yield url

    async def _read(self, client: httpx.AsyncClient, url: str) -> dict[str, Passage]:
        if url not in self._passages:
            self._passages[url] = await page_passages(client, url, "S1", self._max_chars)
        return self._passages[url]


def _most_specific(wanted: Wanted) -> list[str]:
    """What a page must hold to answer: the last part of each name the question asks about
    (`run` of `subprocess.run`, `--soft`), else its first lead word (a stem: `mod`)."""
    names = [thing.rsplit(".", 1)[-1].strip("()").lower() for thing in wanted.things]
    return [name for name in names if name] or wanted.lead[:1]


def _source(page: str, passages: dict[str, Passage]) -> SourceRef:
    """The page as the gate knows a stored source: its text's hash and sketch."""
    text = " ".join(passage.text for passage in passages.values())
    return SourceRef(id=page, url=page, content_hash=content_hash(text), sketch=sketch(words(text)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("golden", nargs="*", type=Path, help="default: examples/golden/*.json")
    parser.add_argument("--list", type=Path, help="write every false pass to this file")
    args = parser.parse_args()
    paths = args.golden or sorted(GOLDEN_DIR.glob("*.json"))
    measurement = Measurement.begin("strongest_test", "python -m bench.strongest_test")
    max_chars = Settings.from_env({}).max_snapshot_chars
    figures: dict[str, dict[str, int]] = {}
    listing: list[str] = []
    total = Tally()
    for path in paths:
        tally = measure(path, max_chars)
        if tally is None:
            print(f"{path.name}: its corpus is not installed here, skipped")
            continue
        figures[path.name] = tally.row()
        listing += tally.listing
        for key, value in tally.row().items():
            setattr(total, key, getattr(total, key) + value)
        print(_line(path.name, tally))
    print(_line("all", total))
    figures["all"] = total.row()
    if args.list:
        args.list.write_text("\n".join(listing) + "\n", encoding="utf-8")
        print(f"wrote {len(listing)} false passes to {args.list}")
    print(f"wrote {measurement.write(figures)}")


def _line(name: str, tally: Tally) -> str:
    return (
        f"{name}: {tally.questions} questions; a true pass for {tally.recalled}, a false pass "
        f"for {tally.exposed}; excerpts passing {tally.true_passes} with the phrase, "
        f"{tally.false_passes} without; briefs {tally.briefs}, answerable {tally.answerable}, "
        f"from two sources {tally.two_sources} ({tally.anywhere} anywhere in the corpus); "
        f"the phrases on two sources {tally.phrase_twice}"
    )


if __name__ == "__main__":
    main()

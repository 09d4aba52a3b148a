"""The offline policy: a deterministic, extractive stand-in for a model (no network, no weights).

It reads only what a model would see (the brief and the transcript) and, per open question:
searches the question, walks the results in rank order, and on each page quotes the excerpt
(whole sentences of one prose paragraph) that holds the most of the question's distinctive words
(`workflows.substance`), with its best-matching sentence as the claim. A page whose shown window
has no such excerpt is
searched with `find` for each distinctive word in turn before the next result is read. It
submits once every question it can answer has evidence; a failed gate about independent sources
sends it to the results it has not cited yet, the same way.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from workflows.contracts import DecideInput
from workflows.models import (
    Decision,
    Question,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    ToolCall,
    Usage,
)
from workflows.results import EvidenceData, GateFailed, PageWindow, SearchData
from workflows.substance import distinctive_words, evidence_problem, keywords, stop_words
from workflows.tools import FINISH_RESEARCH, READ_PAGE, RECORD_EVIDENCE, SEARCH_WEB

MIN_SHARED_KEYWORDS = 2
PROSE_STOPWORDS = 3
MAX_FINDS = 2  # `find` calls on one page before the next result is read
EXCERPT_CHARS = 160  # a quote grows by whole sentences of its paragraph until this long
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(`\"'])")
# Words that frame a question rather than name its subject: never looked for with `find`.
GENERIC = frozenset(
    keywords(
        "happen happens difference between mean means work works purpose way behave behaves "
        "provide provides allow allows affect affects describe describes handle handles"
    )
)


@dataclass(frozen=True)
class Passage:
    source_id: str
    text: str
    section: str


@dataclass(frozen=True)
class Excerpt:
    """Whole sentences of one paragraph of a passage: the quote, and its best sentence."""

    passage_id: str
    quote: str
    claim: str
    score: int  # distinctive words in the quote and its section heading


@dataclass
class Seen:
    """What the transcript shows so far, in the form the policy needs."""

    searches: dict[str, list[str]] = field(default_factory=dict)  # query -> result URLs
    passages: dict[str, Passage] = field(default_factory=dict)  # id -> what the window showed
    finds: dict[str, set[str]] = field(default_factory=dict)  # source -> words looked for
    read_urls: dict[str, str] = field(default_factory=dict)  # url -> source id
    failed_urls: set[str] = field(default_factory=set)
    evidence: dict[str, list[str]] = field(default_factory=dict)  # question -> evidence ids
    used_quotes: set[str] = field(default_factory=set)
    cited_sources: set[str] = field(default_factory=set)
    claims: dict[str, str] = field(default_factory=dict)  # evidence id -> claim
    conflicts: list[str] = field(default_factory=list)  # the host's conflict sentences
    gaps: list[str] = field(default_factory=list)  # from the last failed finish


def observe(request: DecideInput) -> Seen:
    seen = Seen()
    for entry in request.transcript:
        args, data = entry.args, entry.result.data
        if isinstance(args, SearchArgs) and isinstance(data, SearchData):
            seen.searches[args.query] = [hit.url for hit in data.results]
        elif isinstance(args, ReadPageArgs):
            _observe_read(seen, args, data)
        elif isinstance(args, RecordEvidenceArgs) and isinstance(data, EvidenceData):
            _observe_evidence(seen, args, data)
        elif isinstance(data, GateFailed):
            seen.gaps = list(data.gaps)
    return seen


def _observe_read(seen: Seen, args: ReadPageArgs, data: object) -> None:
    if not isinstance(data, PageWindow):  # refused, or the page could not be read
        seen.failed_urls.add(args.url or "")
        return
    seen.read_urls[data.url] = data.source_id
    if args.find:
        seen.finds.setdefault(data.source_id, set()).add(args.find)
    for passage in data.passages:
        seen.passages[passage.id] = Passage(data.source_id, passage.text, passage.section)


def _observe_evidence(seen: Seen, args: RecordEvidenceArgs, data: EvidenceData) -> None:
    seen.evidence.setdefault(args.question_id, []).append(data.evidence_id)
    seen.used_quotes.add(" ".join(data.quote.split()))
    seen.cited_sources.add(args.source_id)
    seen.claims[data.evidence_id] = args.claim
    seen.conflicts += data.conflicts


def decide_offline(request: DecideInput) -> Decision:
    seen = observe(request)
    call = _next_call(request, seen)
    return Decision(tool_calls=[call], usage=estimate_usage(request, call), model="offline")


def _next_call(request: DecideInput, seen: Seen) -> ToolCall:
    short = len(seen.cited_sources) < request.brief.limits.min_sources
    if short and any("independent source" in gap for gap in seen.gaps):
        extra = _another_source(request, seen)
        if extra is not None:
            return extra
    ordered = sorted(request.brief.questions, key=lambda question: not question.required)
    for question in ordered:
        if question.id in seen.evidence:
            continue
        call = _work_on(question, request, seen)
        if call is not None:
            return call
    return finish_call(request, seen)


def _work_on(question: Question, request: DecideInput, seen: Seen) -> ToolCall | None:
    """Search the question, then walk its results in rank order: read the next unread one, or
    record from a read one, or look in it with `find` for a word not looked for yet."""
    if question.text not in seen.searches:
        if request.budget.searches_left > 0:
            return tool_call(SEARCH_WEB, query=question.text)
        return None
    return _from_results(question, request, seen, seen.searches[question.text])


def _from_results(
    question: Question,
    request: DecideInput,
    seen: Seen,
    urls: list[str],
    skip: frozenset[str] | set[str] = frozenset(),
    weak: bool = True,
) -> ToolCall | None:
    terms = question_terms(question, request)
    for url in urls:
        if url in seen.failed_urls:
            continue
        if url not in seen.read_urls:
            if request.budget.pages_left > 0:
                return tool_call(READ_PAGE, url=url)
            continue
        source_id = seen.read_urls[url]
        if source_id in skip:
            continue
        strong = best_excerpt(terms, seen, {source_id}, needed=_strong(terms))
        if strong is not None:
            return record_call(question, strong, seen)
        tried = seen.finds.get(source_id, set())
        untried = [term for term in terms if term not in tried and term not in GENERIC]
        if untried and len(tried) < MAX_FINDS:  # jump to the passages holding the word
            return tool_call(READ_PAGE, source_id=source_id, find=untried[0])
        fallback = best_excerpt(terms, seen, {source_id}, MIN_SHARED_KEYWORDS) if weak else None
        if fallback is not None:
            return record_call(question, fallback, seen)
    return None


def _another_source(request: DecideInput, seen: Seen) -> ToolCall | None:
    """Evidence from a source not cited yet, from the results of every search, the same way but
    only on a strong match: a second source must be worth citing."""
    results = list(dict.fromkeys(url for urls in seen.searches.values() for url in urls))
    for question in request.brief.questions:
        call = _from_results(question, request, seen, results, seen.cited_sources, weak=False)
        if call is not None:
            return call
    return None


def question_terms(question: Question, request: DecideInput) -> list[str]:
    """The question's distinctive words, most specific first: identifiers (`lru_cache`), then
    longer words."""
    brief = request.brief
    words = distinctive_words(question.text, brief.question, [q.text for q in brief.questions])
    return sorted(words, key=lambda word: (not re.search(r"[_\d]", word), -len(word), word))


def _strong(terms: list[str]) -> int:
    """Distinctive words a passage holds to be taken at once: all of up to three, else 2/3."""
    return len(terms) if len(terms) <= 3 else -(-2 * len(terms) // 3)


def best_excerpt(terms: list[str], seen: Seen, among: set[str], needed: int) -> Excerpt | None:
    """The best unused excerpt of the given sources' passages, if it (with its section heading)
    holds `needed` of the distinctive words (at most all there are) and would be accepted as
    evidence. Strong matches are taken at once; weak ones only once `find` has nothing better."""
    wanted = set(terms)
    needed = max(1, min(needed, len(wanted)))
    scored = []
    for order, (passage_id, passage) in enumerate(seen.passages.items()):
        if passage.source_id not in among:
            continue
        for excerpt in _excerpts(passage_id, passage, wanted):
            if excerpt.score < needed or " ".join(excerpt.quote.split()) in seen.used_quotes:
                continue
            if evidence_problem(excerpt.quote, passage.section, excerpt.claim, terms) is None:
                own = len(wanted & keywords(excerpt.quote))
                scored.append((excerpt.score, own, -order, excerpt))
    return max(scored, key=lambda entry: entry[:3])[3] if scored else None


def _excerpts(passage_id: str, passage: Passage, wanted: set[str]) -> list[Excerpt]:
    """For each prose sentence holding a distinctive word: it and the sentences after it in its
    paragraph, up to EXCERPT_CHARS (a sentence, not a signature, a table row or code)."""
    heading = wanted & keywords(passage.section)
    excerpts = []
    for paragraph in passage.text.split("\n\n"):
        if not _prose(paragraph):
            continue
        sentences = [" ".join(s.split()) for s in _SENTENCE.split(paragraph) if s.strip()]
        for first, sentence in enumerate(sentences):
            if not wanted & keywords(sentence):
                continue
            taken = [sentence]
            for following in sentences[first + 1 :]:
                if len(" ".join(taken)) >= EXCERPT_CHARS:
                    break
                taken.append(following)
            quote = " ".join(taken)
            claim = max(taken, key=lambda s: (len(wanted & keywords(s)), -taken.index(s)))
            score = len(wanted & (keywords(quote) | heading))
            excerpts.append(Excerpt(passage_id, quote, claim[:400], score))
    return excerpts


def _prose(text: str) -> bool:
    """Sentences rather than a signature, a table row or a code line."""
    return stop_words(text)[0] >= PROSE_STOPWORDS


def record_call(question: Question, excerpt: Excerpt, seen: Seen) -> ToolCall:
    return tool_call(
        RECORD_EVIDENCE,
        question_id=question.id,
        source_id=seen.passages[excerpt.passage_id].source_id,
        quote=excerpt.quote,
        claim=excerpt.claim,
        stance="supports",
    )


def finish_call(request: DecideInput, seen: Seen) -> ToolCall:
    findings: list[dict[str, Any]] = [
        {"text": " ".join(seen.claims[eid] for eid in ids), "evidence_ids": ids}
        for question in request.brief.questions
        if (ids := seen.evidence.get(question.id))
    ]
    missing = [q.id for q in request.brief.questions if q.id not in seen.evidence]
    notes = [f"No evidence was found for {', '.join(missing)}."] if missing else []
    notes += [f"Conflicting evidence: {sentence}." for sentence in seen.conflicts]
    limitations = " ".join(notes) or "None identified."
    answer = " ".join(str(finding["text"]) for finding in findings) or "No answer was found."
    return tool_call(FINISH_RESEARCH, answer=answer, findings=findings, limitations=limitations)


def tool_call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=json.dumps(arguments, sort_keys=True))


def estimate_usage(request: DecideInput, call: ToolCall) -> Usage:
    """No provider reports usage here: estimate ~4 characters a token and say so."""
    prompt_chars = len(request.brief.model_dump_json()) + request.context_chars
    return Usage(
        input_tokens=prompt_chars // 4 + 1,
        output_tokens=len(call.arguments) // 4 + 1,
        estimated=True,
    )

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

from activities.model.prompt import messages
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
from workflows.results import EvidenceData, GateFailed, PageWindow, SearchData, SearchResultItem
from workflows.substance import distinctive_words, evidence_problem, keywords, stop_words
from workflows.tools import FINISH_RESEARCH, READ_PAGE, RECORD_EVIDENCE, SEARCH_WEB, tool_schemas

MIN_SHARED_KEYWORDS = 2
PROSE_STOPWORDS = 3
MAX_FINDS = 3  # `find` reads for one question's words on one page before the next result
_TOOLS_CHARS = len(json.dumps(tool_schemas()))
EXCERPT_CHARS = 160  # a quote grows by whole sentences of its paragraph until this long
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(`\"'])")
# Words that frame a question rather than name its subject: never looked for with `find`.
GENERIC = frozenset(
    keywords(
        "happen happens difference between mean means work works purpose way behave behaves "
        "provide provides allow allows affect affects describe describes handle handles "
        # words any documentation uses for its subject: never the word that finds the answer
        "parameter parameters argument arguments function functions method methods object "
        "objects value values return returns returned module modules class classes attribute "
        "attributes option options use used using call called"
    )
)


@dataclass(frozen=True)
class Passage:
    source_id: str
    text: str
    section: str


@dataclass(frozen=True)
class Wanted:
    """What a question's evidence should hold: `terms` (its distinctive words, as the host checks
    relevance), `lead` (those that are not generic, most specific first: what a strong match
    holds and what `find` looks for first) and `topic` (its other words: a tie-break, and what
    `find` looks for next)."""

    terms: list[str]
    lead: list[str]
    topic: list[str]


@dataclass(frozen=True)
class Excerpt:
    """Whole sentences of one paragraph of a passage: the quote, and its best sentence."""

    passage_id: str
    quote: str
    claim: str
    context: str  # the section heading and the paragraph before the quote's
    score: int  # lead words in the quote and its section heading
    topic: int  # topic words in the quote


@dataclass(frozen=True)
class Find:
    """A `find` read of a source: the word, where it started, where the next matches start."""

    term: str
    offset: int
    next_offset: int | None


@dataclass
class Seen:
    """What the transcript shows so far, in the form the policy needs."""

    searches: dict[str, list[SearchResultItem]] = field(default_factory=dict)  # query -> results
    passages: dict[str, Passage] = field(default_factory=dict)  # id -> what the window showed
    finds: dict[str, list[Find]] = field(default_factory=dict)  # source -> its `find` reads
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
            seen.searches[args.query] = list(data.results)
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
        find = Find(args.find, args.offset, data.next_offset)
        seen.finds.setdefault(data.source_id, []).append(find)
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
    hits: list[SearchResultItem],
    skip: frozenset[str] | set[str] = frozenset(),
    weak: bool = True,
) -> ToolCall | None:
    """In rank order: a new page is opened at the passages holding the first of the question's
    words its result shows (`find`). Without `weak` (a second source: worth citing or not at
    all), only results showing a word are read, a strong match only is taken, one `find` each."""
    wanted = wanted_words(question, request)
    looked_for = wanted.lead + wanted.topic
    shown = {hit.url: _shown(hit, looked_for) for hit in hits}
    finds = MAX_FINDS if weak else 1
    for hit in hits:
        url = hit.url
        if url in seen.failed_urls or not (weak or shown[url]):
            continue
        if url not in seen.read_urls:
            if request.budget.pages_left > 0:
                first = shown[url][:1]
                return tool_call(READ_PAGE, url=url, **({"find": first[0]} if first else {}))
            continue
        source_id = seen.read_urls[url]
        if source_id in skip:
            continue
        strong = best_excerpt(wanted, seen, {source_id}, needed=_strong(wanted.lead))
        if strong is not None:
            return record_call(question, strong, seen)
        more = _look_further(seen.finds.get(source_id, []), looked_for, finds)
        if more is not None:  # jump to (more of) the passages holding a word
            return tool_call(READ_PAGE, source_id=source_id, **more)
        # A weak match only where the result itself showed what the question is about.
        if weak and shown[url]:
            fallback = best_excerpt(wanted, seen, {source_id}, MIN_SHARED_KEYWORDS)
            if fallback is not None:
                return record_call(question, fallback, seen)
    return None


def _look_further(done: list[Find], words: list[str], budget: int) -> dict[str, Any] | None:
    """The next `find` on a page for a question's words, within `budget` reads of them: the
    rest of the latest word's matches when its window had more, else the next word."""
    mine = [find for find in done if find.term in words]
    if len(mine) >= budget:
        return None
    read = {(find.term, find.offset) for find in done}
    if mine and mine[-1].next_offset is not None:
        latest = mine[-1]
        if (latest.term, latest.next_offset) not in read:
            return {"find": latest.term, "offset": latest.next_offset}
    tried = {find.term for find in done}
    # A word inside one looked for already ("lru" after "lru_cach") finds nothing new first.
    untried = [word for word in words if not any(word in term for term in tried)]
    return {"find": untried[0]} if untried else None


def _shown(hit: SearchResultItem, lead: list[str]) -> list[str]:
    """The distinctive words a result's title, address or snippet shows, most specific first."""
    words = keywords(f"{hit.title} {hit.url.replace('/', ' ')} {hit.snippet}")
    return [term for term in lead if term in words]


def _another_source(request: DecideInput, seen: Seen) -> ToolCall | None:
    """Evidence from a source not cited yet, from the results of every search, the same way but
    only on a strong match: a second source must be worth citing."""
    results = list({hit.url: hit for hits in seen.searches.values() for hit in hits}.values())
    for question in request.brief.questions:
        call = _from_results(question, request, seen, results, seen.cited_sources, weak=False)
        if call is not None:
            return call
    return None


def wanted_words(question: Question, request: DecideInput) -> Wanted:
    terms = question_terms(question, request)
    lead = [term for term in terms if term not in GENERIC] or terms
    topic = sorted(keywords(question.text) - set(terms) - GENERIC, key=_specificity)
    return Wanted(terms=terms, lead=lead, topic=topic)


def _specificity(word: str) -> tuple[bool, int, str]:
    """Identifiers (`lru_cache`) first, then longer words."""
    return (not re.search(r"[_\d.]", word), -len(word), word)


def question_terms(question: Question, request: DecideInput) -> list[str]:
    """The question's distinctive words, most specific first."""
    brief = request.brief
    words = distinctive_words(question.text, brief.question, [q.text for q in brief.questions])
    return sorted(words, key=_specificity)


def _strong(terms: list[str]) -> int:
    """Distinctive words a passage holds to be taken at once: all of up to three, else 2/3."""
    return len(terms) if len(terms) <= 3 else -(-2 * len(terms) // 3)


def best_excerpt(wanted: Wanted, seen: Seen, among: set[str], needed: int) -> Excerpt | None:
    """The best unused excerpt of the given sources' passages, if it (with its section heading)
    holds `needed` of the lead words (at most all there are) and would be accepted as evidence.
    Ties go to the excerpt naming more of the question's topic. Strong matches are taken at once;
    weak ones only once `find` has nothing better."""
    needed = max(1, min(needed, len(wanted.lead)))
    scored = []
    for order, (passage_id, passage) in enumerate(seen.passages.items()):
        if passage.source_id not in among:
            continue
        for excerpt in _excerpts(passage_id, passage, wanted):
            if excerpt.score < needed or " ".join(excerpt.quote.split()) in seen.used_quotes:
                continue
            problem = evidence_problem(excerpt.quote, excerpt.context, excerpt.claim, wanted.terms)
            if problem is None:
                scored.append((excerpt.score, excerpt.topic, -order, excerpt))
    return max(scored, key=lambda entry: entry[:3])[3] if scored else None


def _excerpts(passage_id: str, passage: Passage, wanted: Wanted) -> list[Excerpt]:
    """For each prose sentence holding a lead word (or opening a paragraph whose heading or
    previous paragraph, a signature, holds one): it and the sentences after it in its
    paragraph, up to EXCERPT_CHARS (a sentence, not a signature, a table row or code)."""
    lead, topic = set(wanted.lead), set(wanted.topic)
    excerpts = []
    previous = ""
    for paragraph in passage.text.split("\n\n"):
        # What the paragraph sits under: the heading and the paragraph before (a signature).
        context, previous = f"{passage.section} {previous}", paragraph
        if not _prose(paragraph):
            continue
        heading = lead & keywords(context)
        sentences = [" ".join(s.split()) for s in _SENTENCE.split(paragraph) if s.strip()]
        for first, sentence in enumerate(sentences):
            if not (lead & keywords(sentence) or (first == 0 and heading)):
                continue
            taken = [sentence]
            for following in sentences[first + 1 :]:
                if len(" ".join(taken)) >= EXCERPT_CHARS:
                    break
                taken.append(following)
            quote = " ".join(taken)
            words = keywords(quote)
            claim = max(taken, key=lambda s: (len(lead & keywords(s)), -taken.index(s)))
            score, on_topic = len(lead & (words | heading)), len(topic & words)
            excerpts.append(Excerpt(passage_id, quote, claim[:400], context, score, on_topic))
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
    """No provider reports usage here: estimate ~4 characters a token of what a model would be
    sent (the rendered messages and the tool schemas), and say so."""
    prompt_chars = len(json.dumps(messages(request))) + _TOOLS_CHARS
    return Usage(
        input_tokens=prompt_chars // 4 + 1,
        output_tokens=len(call.arguments) // 4 + 1,
        estimated=True,
    )

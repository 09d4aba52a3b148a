"""The offline policy: a deterministic, extractive stand-in for a model (no network, no weights).

It reads only what a model would see (the brief and the transcript). Per question, required
ones first: read the seed URLs, else search the question, then read its results in rank order
with `find` at the question's most distinctive word (`workflows.substance.distinctive_words`).
A sentence of a page read is a candidate for a question when the gate's own evidence rule
(`workflows.substance.evidence_problem`) accepts it; the best candidates hold the most of the
question's stems, in the sentence and its heading.

Words alone do not tell an answer from a mention: a mention repeats the question's words, an
answer repeats the answer's. So a question is settled only by **agreement**: two accepted
sentences from different pages, not copies of each other, that share content stems or figures
beyond the words of the question and the brief (AGREEING of them). Both are recorded and cited
(the corroboration the gate wants). A question no two pages agree on is submitted as a
limitation, not a finding, so the run ends incomplete with what it found.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any
from urllib.parse import urlsplit

from activities.model.prompt import messages
from workflows.contracts import DecideInput
from workflows.models import Decision, Question, ToolCall, Usage
from workflows.substance import (
    distinctive_words,
    evidence_problem,
    figures,
    keywords,
    stop_words,
)
from workflows.text import sentences
from workflows.tools import (
    FINISH_RESEARCH,
    READ_PAGE,
    RECORD_EVIDENCE,
    SEARCH_WEB,
    EvidenceData,
    PageWindow,
    ReadPageArgs,
    RecordEvidenceArgs,
    SearchArgs,
    SearchData,
    SearchResultItem,
    tool_schemas,
)

AGREEING = 3  # content stems or figures two sentences share beyond the question's own words
RESULTS_READ = 3  # results of a question's search read before it is left open
PROSE_SHARE = 5  # prose has at least one stop word in this many words (about a third is usual)
SHORT_PASSAGE = 400  # characters of a passage quoted whole as well as by its sentences
SAME_PASSAGE = 80  # characters of a passage two pages show alike for them to be copies
FINDS = 2  # `find` reads of one page for a question (its first window, then the next matches)
_TOOLS_CHARS = len(json.dumps(tool_schemas()))


@dataclass(frozen=True)
class Passage:
    """A passage a window showed: its source, text and section heading."""

    source_id: str
    text: str
    section: str


@dataclass(frozen=True)
class Candidate:
    """A sentence the gate's evidence rule accepts for a question, with what it says."""

    source_id: str
    quote: str
    score: int  # distinct question stems in the sentence and its heading
    rank: int  # where its page ranks among the results (reading order for a page not found)
    said: frozenset[str]  # its own content stems and figures beyond the question's words
    answers: bool  # it holds every key term of the question but one (of three or more)


@dataclass
class Seen:
    """What the transcript shows so far, in the form the policies need."""

    searches: dict[str, list[SearchResultItem]] = field(default_factory=dict)  # query -> results
    passages: dict[str, Passage] = field(default_factory=dict)  # id -> passage
    read_urls: dict[str, str] = field(default_factory=dict)  # url -> source id
    failed_urls: set[str] = field(default_factory=set)
    finds: dict[str, list[tuple[str, int | None]]] = field(default_factory=dict)  # source -> reads
    evidence: dict[str, list[str]] = field(default_factory=dict)  # question -> evidence ids
    quotes: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> source id, quote
    tried: set[tuple[str, str]] = field(default_factory=set)  # (question, quote) recorded or not
    claims: dict[str, str] = field(default_factory=dict)  # evidence id -> claim
    conflicts: list[str] = field(default_factory=list)  # the host's conflict sentences


def observe(request: DecideInput) -> Seen:
    seen = Seen()
    for entry in request.transcript:
        args, data = entry.args, entry.result.data
        if isinstance(args, SearchArgs) and isinstance(data, SearchData):
            seen.searches[args.query] = list(data.results)
        elif isinstance(args, ReadPageArgs):
            _observe_read(seen, args, data)
        elif isinstance(args, RecordEvidenceArgs):
            seen.tried.add((args.question_id, args.quote or ""))
            if isinstance(data, EvidenceData):
                _observe_evidence(seen, args, data)
    return seen


def _observe_read(seen: Seen, args: ReadPageArgs, data: object) -> None:
    if not isinstance(data, PageWindow):  # refused, or the page could not be read
        seen.failed_urls.add(args.url or "")
        return
    seen.read_urls[data.url] = data.source_id
    more = data.next_offset if data.more_matches else None
    seen.finds.setdefault(data.source_id, []).append((args.find or "", more))
    for passage in data.passages:
        seen.passages[passage.id] = Passage(data.source_id, passage.text, passage.section)


def _observe_evidence(seen: Seen, args: RecordEvidenceArgs, data: EvidenceData) -> None:
    seen.evidence.setdefault(args.question_id, []).append(data.evidence_id)
    seen.quotes[data.evidence_id] = (args.source_id, data.quote)
    seen.claims[data.evidence_id] = args.claim
    seen.conflicts += data.conflicts


def decide_offline(request: DecideInput) -> Decision:
    seen = observe(request)
    call = _next_call(request, seen)
    return Decision(tool_calls=[call], usage=estimate_usage(request, call), model="offline")


def _next_call(request: DecideInput, seen: Seen) -> ToolCall:
    if request.budget.steps_left <= 1 and seen.evidence:
        return finish_call(request, seen)  # the last step submits what there is
    ordered = sorted(request.brief.questions, key=lambda question: not question.required)
    for question in ordered:
        if settled(question, request, seen):
            continue
        call = _work_on(question, request, seen)
        if call is not None:
            return call
    return finish_call(request, seen)


def _work_on(question: Question, request: DecideInput, seen: Seen) -> ToolCall | None:
    """Record the next sentence of two that agree, else read on: the seeds, the question's
    search, its next result, or further into a result read at the question's word."""
    pair = agreeing_pair(question, request, seen) or ()
    unrecorded = [member for member in pair if (question.id, member.quote) not in seen.tried]
    if unrecorded:
        return record_call(question, unrecorded[0])
    terms = question_terms(question, request)
    unreadable = {seed.url for seed in request.unreadable_seeds}
    seeds = [url for url in [*request.brief.seed_urls, *request.seeds] if url not in unreadable]
    if question.text not in seen.searches and request.budget.searches_left > 0:
        hits = [SearchResultItem(url=url) for url in seeds]
        return _read_next(hits, terms, request, seen) or tool_call(SEARCH_WEB, query=question.text)
    hits = [SearchResultItem(url=url) for url in seeds] + seen.searches.get(question.text, [])
    return _read_next(hits, terms, request, seen)


def _read_next(
    hits: list[SearchResultItem], terms: list[str], request: DecideInput, seen: Seen
) -> ToolCall | None:
    """Of the first RESULTS_READ readable results, the first not yet looked at for the
    question's most telling word (a new page opened at it, a page read for another question
    looked into with `find`), else one whose `find` showed that more passages hold the word."""
    readable = [hit for hit in hits if hit.url not in seen.failed_urls][:RESULTS_READ]
    further: list[ToolCall] = []
    for hit in readable:
        word, source_id = telling_word(hit, terms), seen.read_urls.get(hit.url)
        if source_id is None:
            if request.budget.pages_left > 0:
                return tool_call(READ_PAGE, url=hit.url, find=word)
            continue
        reads = [more for term, more in seen.finds.get(source_id, []) if term == word]
        if not reads:
            return tool_call(READ_PAGE, source_id=source_id, find=word)
        if reads[-1] is not None and len(reads) < FINDS:
            further.append(tool_call(READ_PAGE, source_id=source_id, find=word, offset=reads[-1]))
    return further[0] if further else None


def telling_word(hit: SearchResultItem, terms: list[str]) -> str:
    """The question's most telling word for a result: of its distinctive stems, those the
    result's title, address or snippet shows first, then the longest (the most specific)."""
    shown = keywords(f"{hit.title} {urlsplit(hit.url).path.replace('/', ' ')} {hit.snippet}")
    return min(terms, key=lambda term: (term not in shown, -len(term), term))


def question_terms(question: Question, request: DecideInput) -> list[str]:
    """The question's key terms, as the gate's evidence rule reads them."""
    brief = request.brief
    texts = [q.text for q in brief.questions]
    return distinctive_words(question.text, brief.question, texts)


def candidates(question: Question, request: DecideInput, seen: Seen) -> list[Candidate]:
    """Every sentence read (and every short passage of a few) that the gate's evidence rule
    accepts for the question and that holds at least half its key terms with its heading, best
    first: the most question stems in it and its heading, then the best-ranked page."""
    terms = question_terms(question, request)
    own, asked = keywords(question.text), _asked(question, request)
    ranks = _ranks(question, request, seen)
    found: dict[tuple[str, str], Candidate] = {}
    for passage in seen.passages.values():
        for start, end in _quotable(passage.text):
            quote = passage.text[start:end]
            if not prose(quote):
                continue
            held = keywords(f"{passage.section} {quote}")
            covers = len(held & set(terms))
            if 2 * covers < len(terms):
                continue
            context = f"{passage.section} {passage.text[:start]}"
            if evidence_problem(quote, context, quote, terms, question.text) is not None:
                continue
            said = (keywords(quote) - asked) | figures(quote)
            rank = ranks.get(passage.source_id, len(ranks))
            answers = covers >= len(terms) - (len(terms) > 2)
            candidate = Candidate(
                passage.source_id, quote, len(held & own), rank, frozenset(said), answers
            )
            found.setdefault((passage.source_id, quote), candidate)
    return sorted(found.values(), key=lambda c: (-c.score, c.rank))


def prose(quote: str) -> bool:
    """A sentence that ends as one, with a stop word in every PROSE_SHARE words and no prompt
    line: not code, a signature, a table row or a list of names."""
    stops, count = stop_words(quote)
    lines = quote.strip().splitlines()
    code = any(line.lstrip().startswith((">>>", "$ ", "...")) for line in lines)
    return not code and quote.rstrip().endswith((".", "!", "?")) and stops * PROSE_SHARE >= count


def _quotable(text: str) -> list[tuple[int, int]]:
    """The spans a quote may be: each sentence, and a short passage of a few sentences whole
    (a reference entry: "How many times ... dead-lettered. Default: 5; range 1 to 1000.")."""
    spans = sentences(text)
    whole = [(spans[0][0], spans[-1][1])] if len(spans) > 1 and len(text) <= SHORT_PASSAGE else []
    return spans + whole


def _ranks(question: Question, request: DecideInput, seen: Seen) -> dict[str, int]:
    """Each source read by where its page ranks: seeds first, then the question's results."""
    urls = [*request.brief.seed_urls, *request.seeds]
    urls += [hit.url for hit in seen.searches.get(question.text, [])]
    ranks: dict[str, int] = {}
    for url in urls:
        if url in seen.read_urls:
            ranks.setdefault(seen.read_urls[url], len(ranks))
    return ranks


def agreeing_pair(
    question: Question, request: DecideInput, seen: Seen
) -> tuple[Candidate, Candidate] | None:
    """The best two candidates that agree (`_agree`) and were not refused; None."""
    refused = {quote for qid, quote in seen.tried if qid == question.id} - _recorded(question, seen)
    usable = [c for c in candidates(question, request, seen) if c.quote not in refused]
    family = page_families(seen)
    pairs = [(a, b) for a, b in combinations(usable, 2) if _agree(a, b, family)]
    # the pair that shares the most, then the one that holds the most of the question
    return min(
        pairs, key=lambda p: (-len(p[0].said & p[1].said), -p[0].score - p[1].score), default=None
    )


def _agree(first: Candidate, second: Candidate, family: dict[str, str]) -> bool:
    """From pages that are not copies of each other, they say AGREEING things in common beyond
    the question's words: an answer repeats the answer's words, a mention only the question's."""
    return (
        (first.answers or second.answers)
        and family.get(first.source_id, first.source_id)
        != family.get(second.source_id, second.source_id)
        and len(first.said & second.said) >= AGREEING
    )


def page_families(seen: Seen) -> dict[str, str]:
    """Each source by the first source read that showed a passage of the same text (a mirror,
    another rendering): the gate counts them as one source (`workflows.gate.source_families`)."""
    first: dict[str, str] = {}
    family: dict[str, str] = {}
    for passage in seen.passages.values():
        text = " ".join(passage.text.split())
        if len(text) < SAME_PASSAGE:
            continue
        owner = first.setdefault(text, family.get(passage.source_id, passage.source_id))
        if owner != passage.source_id:
            family.setdefault(passage.source_id, owner)
    return family


def _recorded(question: Question, seen: Seen) -> set[str]:
    return {seen.quotes[eid][1] for eid in seen.evidence.get(question.id, [])}


def settled(question: Question, request: DecideInput, seen: Seen) -> bool:
    """Done with: two recorded quotes from different pages agree."""
    return bool(settling(question, request, seen))


def settling(question: Question, request: DecideInput, seen: Seen) -> list[str]:
    """The evidence ids of the first two recorded quotes for the question that agree."""
    found = {
        (c.source_id, " ".join(c.quote.split())): c for c in candidates(question, request, seen)
    }
    recorded = [
        (eid, found[key])
        for eid in seen.evidence.get(question.id, [])
        if (key := (seen.quotes[eid][0], " ".join(seen.quotes[eid][1].split()))) in found
    ]
    family = page_families(seen)
    for (first, a), (second, b) in combinations(recorded, 2):
        if _agree(a, b, family):
            return [first, second]
    return []


def _asked(question: Question, request: DecideInput) -> set[str]:
    return keywords(question.text) | keywords(request.brief.question)


def record_call(question: Question, candidate: Candidate) -> ToolCall:
    return tool_call(
        RECORD_EVIDENCE,
        question_id=question.id,
        source_id=candidate.source_id,
        quote=candidate.quote,
        claim=candidate.quote,
        stance="supports",
    )


def finish_call(request: DecideInput, seen: Seen, *, judged: bool = True) -> ToolCall:
    """The report: a finding per settled question citing its two agreeing quotes; every other
    question is a limitation (the gate then finds it uncovered: incomplete, not wrong). Not
    `judged` (the fixed pipeline's), every question with evidence is a finding."""
    findings: list[dict[str, Any]] = []
    open_ids: list[str] = []
    for question in request.brief.questions:
        ids = settling(question, request, seen) if judged else seen.evidence.get(question.id, [])
        if ids:
            text = " ".join(seen.claims[eid] for eid in ids)
            findings.append({"text": text, "evidence_ids": ids})
        else:
            open_ids.append(question.id)
    missing = "No two sources were found to agree on" if judged else "No evidence was found for"
    notes = [f"{missing} {', '.join(open_ids)}."] if open_ids else []
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

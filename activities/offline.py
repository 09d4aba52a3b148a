"""The offline policy: a deterministic, extractive stand-in for a model (no network, no weights).

It reads only what a model would see (the brief and the transcript) and, per open question:
searches the question, reads the best unread result, records the passage sharing the most
keywords with the question, and submits once every question it can answer has evidence. A
failed gate about independent sources sends it to read one more result.
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
from workflows.substance import keywords
from workflows.tools import FINISH_RESEARCH, READ_PAGE, RECORD_EVIDENCE, SEARCH_WEB

MIN_SHARED_KEYWORDS = 2


@dataclass
class Seen:
    """What the transcript shows so far, in the form the policy needs."""

    searches: dict[str, list[str]] = field(default_factory=dict)  # query -> result URLs
    passages: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (source, text)
    read_urls: dict[str, str] = field(default_factory=dict)  # url -> source id
    next_offsets: dict[str, int | None] = field(default_factory=dict)  # source -> unread rest
    failed_urls: set[str] = field(default_factory=set)
    evidence: dict[str, list[str]] = field(default_factory=dict)  # question -> evidence ids
    used_passages: set[str] = field(default_factory=set)
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
    seen.next_offsets[data.source_id] = data.next_offset
    for passage in data.passages:
        seen.passages[passage.id] = (data.source_id, passage.text)


def _observe_evidence(seen: Seen, args: RecordEvidenceArgs, data: EvidenceData) -> None:
    seen.evidence.setdefault(args.question_id, []).append(data.evidence_id)
    seen.used_passages.add(args.passage_id or "")
    seen.cited_sources.add(args.source_id)
    seen.claims[data.evidence_id] = args.claim
    seen.conflicts += data.conflicts


def decide_offline(request: DecideInput) -> Decision:
    seen = observe(request)
    call = _next_call(request, seen)
    return Decision(tool_calls=[call], usage=_estimate(request, call), model="offline")


def _next_call(request: DecideInput, seen: Seen) -> ToolCall:
    if any("independent source" in gap for gap in seen.gaps):
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
    return _finish(request, seen)


def _work_on(question: Question, request: DecideInput, seen: Seen) -> ToolCall | None:
    """Search the question, then walk its results in rank order: read the next unread one, or
    record from a read one whose best passage matches the question well enough."""
    if question.text not in seen.searches:
        if request.budget.searches_left > 0:
            return _call(SEARCH_WEB, query=question.text)
        return None
    for url in seen.searches[question.text]:
        if url in seen.failed_urls:
            continue
        if url not in seen.read_urls:
            if request.budget.pages_left > 0:
                return _call(READ_PAGE, url=url)
            continue
        source_id = seen.read_urls[url]
        best = _best_passage(question, seen, among={source_id})
        if best is not None:
            return _record(question, best, seen)
        offset = seen.next_offsets.get(source_id)
        if offset is not None:  # page on through a stored page: a step, not a fetch
            return _call(READ_PAGE, source_id=source_id, offset=offset)
    return None


def _another_source(request: DecideInput, seen: Seen) -> ToolCall | None:
    """Record from a source not cited yet, or read one more result to find one."""
    uncited = {sid for sid in seen.read_urls.values() if sid not in seen.cited_sources}
    for question in request.brief.questions:
        best = _best_passage(question, seen, among=uncited)
        if best is not None:
            return _record(question, best, seen)
    unread = _unread([url for urls in seen.searches.values() for url in urls], seen)
    if unread and request.budget.pages_left > 0:
        return _call(READ_PAGE, url=unread[0])
    return None


def _unread(urls: list[str], seen: Seen) -> list[str]:
    return [url for url in urls if url not in seen.read_urls and url not in seen.failed_urls]


def _best_passage(question: Question, seen: Seen, among: set[str]) -> str | None:
    """The unused passage of the given sources sharing the most keywords with the question,
    if it shares at least two thirds of them (and never fewer than MIN_SHARED_KEYWORDS)."""
    wanted = keywords(question.text)
    scored = [
        (len(wanted & keywords(text)), passage_id)
        for passage_id, (source_id, text) in seen.passages.items()
        if passage_id not in seen.used_passages and source_id in among
    ]
    best = max(scored, key=lambda item: item[0], default=(0, ""))
    needed = max(MIN_SHARED_KEYWORDS, -(-2 * len(wanted) // 3))
    return best[1] if best[0] >= needed else None


def _record(question: Question, passage_id: str, seen: Seen) -> ToolCall:
    source_id, text = seen.passages[passage_id]
    return _call(
        RECORD_EVIDENCE,
        question_id=question.id,
        source_id=source_id,
        passage_id=passage_id,
        claim=_first_sentence(text),
        stance="supports",
    )


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(\s|$)", text.strip(), re.DOTALL)
    sentence = match.group(1) if match else text.strip()
    return " ".join(sentence.split())[:400]


def _finish(request: DecideInput, seen: Seen) -> ToolCall:
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
    return _call(FINISH_RESEARCH, answer=answer, findings=findings, limitations=limitations)


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=json.dumps(arguments, sort_keys=True))


def _estimate(request: DecideInput, call: ToolCall) -> Usage:
    """No provider reports usage here: estimate ~4 characters a token and say so."""
    prompt_chars = len(request.brief.model_dump_json()) + request.context_chars
    return Usage(
        input_tokens=prompt_chars // 4 + 1,
        output_tokens=len(call.arguments) // 4 + 1,
        estimated=True,
    )

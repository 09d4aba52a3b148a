"""Evidence: prove a quote from the stored snapshot, check it against the evidence rules, store it.

The rules live here, not in the ledger: a quote must be in the snapshot (whitespace-normalised,
`pages.extract.find_quote`), a passage must be one of the source's, and the evidence must inform
and answer its question (`workflows.substance.evidence_problem`). Only then does the ledger insert
the row; the reads, the checks and the insert share one transaction.
"""

from __future__ import annotations

from activities.ledger import EvidenceRows, Ledger, QuotableSource, passage_id
from activities.pages.extract import find_quote
from workflows.models import Evidence
from workflows.rules import is_judgement
from workflows.substance import evidence_problem, figures, keywords
from workflows.text import sentences
from workflows.tools.record_evidence import RecordEvidenceInput, RecordEvidenceResult

# Text of its passage before a quote that counts as the quote's context (with the section
# heading and the passage just before).
QUOTE_LEAD_CHARS = 1_000
# Recording by passage_id quotes at most this many sentences of the passage: those of the claim.
MAX_QUOTE_SENTENCES = 3
# A passage this short is already a few sentences: it is quoted whole. A careful model cites the
# facts around its claim's own sentence (a version, a rate in the next sentence), and an older
# figure inside it no longer hides a conflict (the gate reads a figure tied to a release as that
# release's, not as the current value). Only a longer passage is cut to its claim's sentences.
QUOTE_WHOLE_CHARS = 1_000
# How far before and after a quote its sentence is looked for.
SENTENCE_REACH = 600


class EvidenceRefused(Exception):
    """The quote or passage cannot be proven from the stored snapshot; the message says why."""


async def record_evidence(
    ledger: Ledger, request: RecordEvidenceInput, *, execution: str | None = None
) -> RecordEvidenceResult:
    """Record evidence whose quote is proven from the stored snapshot, or say why not; a
    recorded ID returns its row."""
    async with ledger.writing_evidence(request.scope.run_id, execution=execution) as rows:
        stored = await rows.recorded(request.evidence_id)
        if stored is not None:
            return RecordEvidenceResult(evidence=stored)
        try:
            evidence, context = await prove(rows, request)
            evidence = check(evidence, context, request.terms, request.question, request.judged)
        except EvidenceRefused as refused:
            return RecordEvidenceResult(error=str(refused))
        await rows.insert(evidence, request.scope.step)
        return RecordEvidenceResult(evidence=evidence)


def check(
    evidence: Evidence, context: str, terms: list[str], question: str = "", judged: bool = False
) -> Evidence:
    """The evidence, or EvidenceRefused when it breaks an evidence rule of the gate. With a
    verifier to judge it (`judged`), a judgement rule's doubt is kept on it as a concern."""
    problem = evidence_problem(evidence.quote, context, evidence.claim, terms, question)
    if problem is None:
        return evidence
    if judged and is_judgement(problem):
        return evidence.model_copy(update={"concerns": [problem]})
    raise EvidenceRefused(problem)


async def prove(rows: EvidenceRows, request: RecordEvidenceInput) -> tuple[Evidence, str]:
    """The evidence with its quote copied from the snapshot and the page text it sits under
    (section heading, the paragraph before), or EvidenceRefused."""
    source = await rows.source(request.source_id)
    if source is None:
        raise EvidenceRefused(
            f"unknown source {request.source_id}: read the page before recording evidence"
        )
    if source.status != "ok":
        raise EvidenceRefused(
            f"source {request.source_id} could not be read ({source.error}): "
            "it has no text to quote"
        )
    if request.passage_id is not None:
        evidence, context = await _from_passage(rows, request, request.passage_id, source)
    else:
        evidence, context = await _from_quote(rows, request, source.snapshot or "")
    section = await rows.passage_at(request.source_id, evidence.start)
    sentence = whole_sentences(source.snapshot or "", evidence.start, evidence.end)
    return evidence.model_copy(
        update={"sentence": sentence, "section": section.section if section else ""}
    ), context


def whole_sentences(snapshot: str, start: int, end: int) -> str:
    """The sentence(s) of `snapshot` that the quote at [start, end) was cut from: from the start
    of the sentence it begins in to the end of the one it ends in (at most SENTENCE_REACH
    characters either side)."""
    low, high = max(0, start - SENTENCE_REACH), min(len(snapshot), end + SENTENCE_REACH)
    window = snapshot[low:high]
    first, last = start - low, end - low
    for begin, finish in sentences(window):
        if begin <= start - low < finish:
            first = min(first, begin)
        if begin < end - low <= finish:
            last = max(last, finish)
    return window[first:last]


async def _from_passage(
    rows: EvidenceRows, request: RecordEvidenceInput, wanted: str, source: QuotableSource
) -> tuple[Evidence, str]:
    passage = await rows.passage(request.source_id, wanted)
    if passage is None:
        raise EvidenceRefused(_unknown_passage(request.source_id, wanted, source.passage_count))
    # Evidence at the size of its claim: the sentences of the passage that hold it, not all of it.
    first, last = claim_sentences(passage.text, request.claim)
    quote = passage.text[first:last]
    start = passage.start + first
    evidence = _new_evidence(request, quote, passage.passage_id, start, start + len(quote))
    before = passage.text[max(0, first - QUOTE_LEAD_CHARS) : first]  # it sits under them too
    return evidence, f"{passage.context} {before}" if before.strip() else passage.context


def claim_sentences(text: str, claim: str) -> tuple[int, int]:
    """Where in `text` (a passage) the sentences holding `claim` are: the run of at most
    MAX_QUOTE_SENTENCES consecutive sentences (lines, list items and sentences alike) that holds
    the most of the claim's figures, then the most of its content words, then is the shortest.
    The whole text when it is at most QUOTE_WHOLE_CHARS long, one sentence, or the claim names
    nothing in it."""
    if len(text) <= QUOTE_WHOLE_CHARS:
        return 0, len(text)
    spans = sentences(text)
    if len(spans) <= 1:
        return spans[0] if spans else (0, len(text))
    wanted_figures, wanted_words = figures(claim), keywords(claim)
    best: tuple[tuple[int, int, int], tuple[int, int]] | None = None
    for index in range(len(spans)):
        for size in range(1, MAX_QUOTE_SENTENCES + 1):
            if index + size > len(spans):
                break
            span = (spans[index][0], spans[index + size - 1][1])
            window = text[span[0] : span[1]]
            score = (
                len(wanted_figures & figures(window)),
                len(wanted_words & keywords(window)),
                -len(window),
            )
            if best is None or score > best[0]:
                best = (score, span)
    assert best is not None
    if best[0][:2] == (0, 0):  # nothing of the claim is here: the check says why, on all of it
        return 0, len(text)
    return best[1]


def _unknown_passage(source_id: str, wanted: str, passage_count: int) -> str:
    if not wanted.startswith(f"{source_id}.P"):
        return f"passage {wanted} is not in source {source_id}: its passage ids start {source_id}.P"
    if passage_count == 0:
        return f"unknown passage {wanted}: source {source_id} has no passages"
    last = passage_id(source_id, passage_count)
    return f"unknown passage {wanted}: source {source_id} has {source_id}.P1 to {last}"


async def _from_quote(
    rows: EvidenceRows, request: RecordEvidenceInput, snapshot: str
) -> tuple[Evidence, str]:
    span = find_quote(snapshot, request.quote or "")
    if span is None:
        raise EvidenceRefused(
            f"quote not found verbatim in {request.source_id} (copy the words exactly as the page "
            "shows them, or give a passage_id instead)"
        )
    start, end = span
    passage = await rows.passage_at(request.source_id, start)
    if passage is None:
        return _new_evidence(request, snapshot[start:end], None, start, end), ""
    # A quote from inside a passage also sits under the passage's text before it (a signature).
    before = snapshot[max(passage.start, start - QUOTE_LEAD_CHARS) : start]
    context = f"{passage.context} {before}"
    return _new_evidence(request, snapshot[start:end], passage.passage_id, start, end), context


def _new_evidence(
    request: RecordEvidenceInput, quote: str, passage_id: str | None, start: int, end: int
) -> Evidence:
    return Evidence(
        id=request.evidence_id,
        question_id=request.question_id,
        source_id=request.source_id,
        claim=request.claim,
        stance=request.stance,
        quote=quote,
        passage_id=passage_id,
        start=start,
        end=end,
    )

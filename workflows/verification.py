"""The independent check of meaning (pure): what the verifier is asked, and how the host reads
its answer.

After the proof rules pass a submission, the verifier judges every claim of it: the answer, each
finding, the limitations, and for each required question whether the evidence cited for it
answers it (`claims`). A claim is its text, its own sub-question and the quotes it cites, each
in context: the whole sentence(s) of the stored page it was cut from, its page's title, URL,
section and stated dates or releases; nothing else (no transcript). What the judgement rules
doubted about a claim (`workflows.rules`, `gate.Concern`) goes with it as questions the
verifier must answer. The host trusts none of it blindly (`settle`): a `supported` whose
sentence is not copied from a cited quote (or its sentence), or that leaves a concern holding,
counts as `not_supported`. Anything but `supported` is a gap with the verifier's whole reason
(`gaps`). A verifier that says `supported` to everything never weakens the proof rules: it is
asked only after they pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Literal

from pydantic import BaseModel, Field

from workflows.activity import Activity
from workflows.cleaning import clean, echo
from workflows.models import Brief, Evidence, Report, SourceRef, Usage
from workflows.rules import refusal
from workflows.scope import RunScope

VerdictWord = Literal["supported", "partly", "not_supported", "contradicted"]
VERDICTS: tuple[VerdictWord, ...] = ("supported", "partly", "not_supported", "contradicted")
BLOCKING: frozenset[str] = frozenset({"partly", "not_supported", "contradicted"})
# What a claim is: the answer, a finding, the limitations, or the coverage of a required question
# (its text is the question; "supported" means the cited evidence answers it).
Subject = Literal["answer", "finding", "limitations", "coverage"]
# How a report was checked for meaning. "": before the verifier existed (nothing is said);
# "model": a verifier model read every claim; "off": switched off, the deterministic checks only;
# "deterministic": the offline policy wrote it, the deterministic checks are its verifier.
VerifierMode = Literal["", "model", "off", "deterministic"]
ANSWER = 0  # the claim number of the answer; findings are 1, 2, ...
MIN_SENTENCE_WORDS = 3  # a copied "the" or "30 seconds" supports nothing
MAX_REASON_CHARS = 1_500  # the verifier's whole reason: the model revises by it
MAX_SENTENCE_CHARS = 1_000
NOT_COPIED = "the verifier's supporting sentence is not copied from a quote the claim cites"
UNANSWERED_CONCERN = "the verifier did not answer every concern the host's rules raised"
CONCERN_HOLDS = "the verifier said supported, yet found this concern holds"


class ClaimQuote(BaseModel):
    """A cited quote as the verifier sees it: in its sentence, on its page."""

    evidence_id: str
    question_id: str
    text: str
    sentence: str = ""  # the whole sentence(s) of the stored page it was cut from, if wider
    section: str = ""  # the heading it sits under
    title: str = ""
    url: str = ""
    dated: list[str] = Field(default_factory=list)  # dates and releases the page states
    concerns: list[str] = Field(default_factory=list)  # the rules' doubts when it was recorded


class Claim(BaseModel):
    """One statement of a report, as the verifier sees it: nothing but these fields."""

    number: int  # ANSWER (0), the finding's number, then the limitations and coverage claims
    text: str
    subject: Subject = "finding"
    question_id: str = ""  # a coverage claim's question
    questions: list[str] = Field(default_factory=list)  # its own sub-questions (or main question)
    quotes: list[ClaimQuote] = Field(default_factory=list)
    # What the judgement rules doubted about it: the verifier answers each; only "supported"
    # with none holding lets the claim stand.
    concerns: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        return label(self.subject, self.number, self.question_id)


def label(subject: str, number: int, question_id: str = "") -> str:
    """How a refusal names a claim: "the answer", "finding 2", "the limitations section",
    "required question Q3"."""
    if subject == "coverage":
        return f"required question {question_id}"
    if subject == "limitations":
        return "the limitations section"  # "... section is only partly supported"
    return "the answer" if number == ANSWER else f"finding {number}"


class Verdict(BaseModel):
    """The host's reading of the verifier's answer on one claim (`said`: what the verifier said)."""

    number: int
    claim: str
    verdict: VerdictWord
    said: VerdictWord
    subject: Subject = "finding"  # "finding" for the answer too in rows before subjects
    question_id: str = ""
    sentence: str = ""  # the supporting sentence, copied from `evidence_id`'s quote ("" if none)
    evidence_id: str = ""
    reason: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)

    @property
    def blocking(self) -> bool:
        return self.verdict in BLOCKING

    @property
    def label(self) -> str:
        return label(self.subject, self.number, self.question_id)


class Verification(BaseModel):
    """How the report's meaning was checked, and the verdicts when a verifier read it."""

    mode: VerifierMode = ""
    verifier: str = ""  # "openai gpt-4o-mini": the provider and model that read the claims
    verdicts: list[Verdict] = Field(default_factory=list)


class VerifyInput(BaseModel):
    """The claims of a submission the gate passed, for the verifier: nothing but each claim, its
    sub-questions and its cited quotes. The scope's step (the finish step) keys the verdicts."""

    scope: RunScope  # the finish step (RunScope.tool_of)
    claims: list[Claim] = Field(default_factory=list)
    rerun_of: str | None = None  # a rerun replays its source run's verdicts, asking no model


class VerifyResult(BaseModel):
    verdicts: list[Verdict] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)  # every verdict's, to count against max_tokens


VERIFY = "verify"  # the activity's registered name (worker.py)
# The verifier asks the claims of a report concurrently; a retry asks only the claims left (each
# verdict is kept as it comes), and the deadline caps it.
VERIFY_ACTIVITY = Activity(
    VERIFY, VerifyInput, VerifyResult, heartbeat=True, timeout=timedelta(seconds=600)
)


def claims(
    report: Report,
    evidence: dict[str, Evidence],
    brief: Brief,
    sources: dict[str, SourceRef] | None = None,
    concerns: Callable[[str], list[str]] | None = None,
    *,
    composed: bool = False,
) -> list[Claim]:
    """Every claim of a submission: the answer (against every quote the findings cite), each
    finding (against its own), the limitations (against every recorded quote: what they say of
    the subject or the sources must be stated there), and the coverage of each required question
    (the evidence cited for it, with the concerns recorded on it). `concerns`: the gate's doubts
    by "the answer" / "finding N" / "the limitations". A `composed` report's answer and
    limitations are the host's own words: only its findings and coverage are claims."""
    sources = sources or {}
    concerns_of = concerns or (lambda where: [])
    texts = {question.id: question.text for question in brief.questions}

    def quotes(ids: list[str]) -> list[ClaimQuote]:
        known = [evidence[eid] for eid in dict.fromkeys(ids) if eid in evidence]
        return [in_context(item, sources.get(item.source_id)) for item in known]

    def questions(cited: list[ClaimQuote]) -> list[str]:
        ids = dict.fromkeys(quote.question_id for quote in cited)
        return [texts[qid] for qid in ids if qid in texts]

    found = []
    for number, finding in enumerate(report.findings, start=1):
        cited = quotes(finding.evidence_ids)
        found.append(
            Claim(
                number=number,
                text=finding.text,
                questions=questions(cited),
                quotes=cited,
                # a composed finding is the evidence's own claims: their doubts go with it
                concerns=concerns_of(f"finding {number}")
                + ([concern for quote in cited for concern in quote.concerns] if composed else []),
            )
        )
    cited_ids = [eid for finding in report.findings for eid in finding.evidence_ids]
    number = len(report.findings)
    if not composed:
        answer = Claim(
            number=ANSWER,
            text=report.answer,
            subject="answer",
            questions=[brief.question],
            quotes=quotes(cited_ids),
            concerns=concerns_of("the answer"),
        )
        found.insert(0, answer)
        if len(report.limitations.split()) >= MIN_SENTENCE_WORDS:
            number += 1
            found.append(
                Claim(
                    number=number,
                    text=report.limitations,
                    subject="limitations",
                    questions=[brief.question],
                    quotes=quotes(sorted(evidence)),
                    concerns=concerns_of("the limitations"),
                )
            )
    for question in brief.questions:
        if not question.required:
            continue
        number += 1
        ids = [eid for eid in cited_ids if eid in evidence]
        cited = quotes([eid for eid in ids if evidence[eid].question_id == question.id])
        found.append(
            Claim(
                number=number,
                text=question.text,
                subject="coverage",
                question_id=question.id,
                questions=[question.text],
                quotes=cited,
                concerns=[concern for quote in cited for concern in quote.concerns],
            )
        )
    return found


def in_context(item: Evidence, source: SourceRef | None) -> ClaimQuote:
    """A recorded quote with what the verifier needs to scope it: its sentence and its page."""
    return ClaimQuote(
        evidence_id=item.id,
        question_id=item.question_id,
        text=item.quote,
        sentence=item.sentence if item.sentence != item.quote else "",
        section=item.section,
        title=source.title if source is not None else "",
        url=(source.final_url or source.url) if source is not None else "",
        dated=list(source.names) if source is not None else [],
        concerns=[f"{item.id}: {concern}" for concern in item.concerns],
    )


def settle(
    claim: Claim,
    said: VerdictWord,
    sentence: str,
    reason: str,
    *,
    holding: list[bool] | None = None,
    model: str = "",
    usage: Usage | None = None,
) -> Verdict:
    """The verdict the host accepts: `supported` and `partly` stand only with a sentence copied
    from one of the claim's quotes (or the sentence it was cut from); `supported` only with an
    answer to each of the claim's concerns (`holding`: whether each still holds) and none
    holding. Otherwise the claim is `not_supported`, and says why."""
    sentence = clean(_unquoted(sentence), MAX_SENTENCE_CHARS)
    reason = clean(" ".join(reason.split()), MAX_REASON_CHARS)
    source = copied_from(sentence, claim)
    verdict: VerdictWord = said
    holding = holding or []
    if said in ("supported", "partly") and source is None:
        verdict, reason = "not_supported", NOT_COPIED
    elif said == "supported" and len(holding) < len(claim.concerns):
        verdict, reason = "not_supported", UNANSWERED_CONCERN
    elif said == "supported" and any(holding[: len(claim.concerns)]):
        held = next(i for i, holds in enumerate(holding) if holds)
        verdict = "not_supported"
        reason = clean(f"{CONCERN_HOLDS}: {claim.concerns[held]}. {reason}", MAX_REASON_CHARS)
    return Verdict(
        number=claim.number,
        claim=claim.text,
        verdict=verdict,
        said=said,
        subject=claim.subject,
        question_id=claim.question_id,
        sentence=sentence,
        evidence_id=source or "",
        reason=reason,
        model=model,
        usage=usage or Usage(),
    )


def copied_from(sentence: str, claim: Claim) -> str | None:
    """The evidence id of the first cited quote holding `sentence` verbatim (whitespace aside, on
    word boundaries), or None; a sentence of fewer than MIN_SENTENCE_WORDS words is no copy."""
    needle = " ".join(sentence.split())
    if len(needle.split()) < MIN_SENTENCE_WORDS:
        return None
    for quote in claim.quotes:
        for text in (quote.text, quote.sentence):
            if text and _contains(" ".join(text.split()), needle):
                return quote.evidence_id
    return None


def gaps(verdicts: list[Verdict]) -> list[str]:
    """One gap per claim the verifier did not find supported, with its whole reason."""
    found = []
    for verdict in verdicts:
        if not verdict.blocking:
            continue
        why = echo(verdict.reason, MAX_REASON_CHARS) or "no reason given"
        if verdict.subject == "coverage":
            said = {"partly": "partly answers", "contradicted": "contradicts"}.get(
                verdict.verdict, "does not answer"
            )
            question = verdict.question_id
            found.append(refusal("meaning", "unanswered", question=question, said=said, reason=why))
        else:
            found.append(refusal("meaning", verdict.verdict, where=verdict.label, reason=why))
    return found


def _contains(haystack: str, needle: str) -> bool:
    for match in re.finditer(re.escape(needle), haystack):
        before = haystack[match.start() - 1] if match.start() else " "
        after = haystack[match.end()] if match.end() < len(haystack) else " "
        if not (_word_char(before) and _word_char(needle[0])) and not (
            _word_char(after) and _word_char(needle[-1])
        ):
            return True
    return False


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def _unquoted(sentence: str) -> str:
    """The sentence without the quotation marks a verifier may wrap it in."""
    return " ".join(sentence.split()).strip("\"' \u201c\u201d\u2018\u2019\u00ab\u00bb")

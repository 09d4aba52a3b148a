"""The independent check of meaning (pure): what the verifier is asked, and how the host reads
its answer.

After the deterministic gate passes a submission, each finding and the answer become a `Claim`:
its text, the sub-questions it answers and the quotes it cites, nothing else (no transcript, no
page text beyond the quotes). A verifier (the `verify` activity: a model with a fresh context)
returns a verdict per claim and the sentence of a quote that supports it, copied. The host trusts
none of it blindly: a `supported` or `partly` whose sentence is not inside a cited quote, word for
word (whitespace aside), counts as `not_supported` (`settle`). `not_supported` and `contradicted`
are gate gaps, with the verifier's one-sentence reason (`gaps`). A verifier that says `supported`
to everything never weakens the deterministic checks: it is asked only after they pass.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from workflows.cleaning import clean, echo
from workflows.models import Brief, Evidence, Usage
from workflows.rules import refusal

if TYPE_CHECKING:  # the finish tool asks the verifier: its argument model names only a type here
    from workflows.tools.finish_research import FinishArgs

VerdictWord = Literal["supported", "partly", "not_supported", "contradicted"]
VERDICTS: tuple[VerdictWord, ...] = ("supported", "partly", "not_supported", "contradicted")
BLOCKING: frozenset[str] = frozenset({"not_supported", "contradicted"})
# How a report was checked for meaning. "": before the verifier existed (nothing is said);
# "model": a verifier model read every claim; "off": switched off, the deterministic checks only;
# "deterministic": the offline policy wrote it, the deterministic checks are its verifier.
VerifierMode = Literal["", "model", "off", "deterministic"]
ANSWER = 0  # the claim number of the answer; findings are 1, 2, ...
MIN_SENTENCE_WORDS = 3  # a copied "the" or "30 seconds" supports nothing
MAX_REASON_CHARS = 300
MAX_SENTENCE_CHARS = 1_000
NOT_COPIED = "the verifier's supporting sentence is not copied from a quote the claim cites"
ONLY_PARTLY = "the verifier found it only partly supported, and the rules could not match"


class ClaimQuote(BaseModel):
    evidence_id: str
    question_id: str
    text: str


class Claim(BaseModel):
    """One statement of a report, as the verifier sees it: nothing but these fields."""

    number: int  # ANSWER (0) or the finding's number
    text: str
    questions: list[str] = Field(default_factory=list)  # the sub-questions (or main question)
    quotes: list[ClaimQuote] = Field(default_factory=list)
    # Figures the gate's rules could not match to the quotes (derived, counted) and left to the
    # verifier: only "supported" lets them stand.
    deferred: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        return "the answer" if self.number == ANSWER else f"finding {self.number}"


class Verdict(BaseModel):
    """The host's reading of the verifier's answer on one claim (`said`: what the verifier said)."""

    number: int
    claim: str
    verdict: VerdictWord
    said: VerdictWord
    sentence: str = ""  # the supporting sentence, copied from `evidence_id`'s quote ("" if none)
    evidence_id: str = ""
    reason: str = ""
    model: str = ""
    usage: Usage = Field(default_factory=Usage)

    @property
    def blocking(self) -> bool:
        return self.verdict in BLOCKING


class Verification(BaseModel):
    """How the report's meaning was checked, and the verdicts when a verifier read it."""

    mode: VerifierMode = ""
    verifier: str = ""  # "openai gpt-4o-mini": the provider and model that read the claims
    verdicts: list[Verdict] = Field(default_factory=list)


def claims(
    report: FinishArgs,
    evidence: dict[str, Evidence],
    brief: Brief,
    deferred: dict[str, list[str]] | None = None,
) -> list[Claim]:
    """The answer (against every quote the findings cite) and each finding (against its own);
    `deferred`: the figures the gate left to the verifier, by "the answer" / "finding N"."""
    deferred = deferred or {}
    texts = {question.id: question.text for question in brief.questions}

    def quotes(ids: list[str]) -> list[ClaimQuote]:
        known = [evidence[eid] for eid in dict.fromkeys(ids) if eid in evidence]
        return [
            ClaimQuote(evidence_id=item.id, question_id=item.question_id, text=item.quote)
            for item in known
        ]

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
                deferred=deferred.get(f"finding {number}", []),
            )
        )
    everything = quotes([eid for finding in report.findings for eid in finding.evidence_ids])
    answer = Claim(
        number=ANSWER,
        text=report.answer,
        questions=[brief.question],
        quotes=everything,
        deferred=deferred.get("the answer", []),
    )
    return [answer, *found]


def settle(
    claim: Claim,
    said: VerdictWord,
    sentence: str,
    reason: str,
    *,
    model: str = "",
    usage: Usage | None = None,
) -> Verdict:
    """The verdict the host accepts: `supported` and `partly` stand only with a sentence copied
    from one of the claim's quotes; otherwise the claim is `not_supported`, and says why."""
    sentence = clean(_unquoted(sentence), MAX_SENTENCE_CHARS)
    reason = clean(" ".join(reason.split()), MAX_REASON_CHARS)
    source = copied_from(sentence, claim)
    verdict: VerdictWord = said
    if said in ("supported", "partly") and source is None:
        verdict, reason = "not_supported", NOT_COPIED
    elif said == "partly" and claim.deferred:  # a figure only the verifier could confirm
        verdict = "not_supported"
        reason = f"{ONLY_PARTLY} {', '.join(echo(f, 40) for f in claim.deferred[:5])}"
    return Verdict(
        number=claim.number,
        claim=claim.text,
        verdict=verdict,
        said=said,
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
        if _contains(" ".join(quote.text.split()), needle):
            return quote.evidence_id
    return None


def gaps(verdicts: list[Verdict]) -> list[str]:
    """One gap per claim the verifier did not find supported, with its reason."""
    found = []
    for verdict in verdicts:
        if not verdict.blocking:
            continue
        label = "the answer" if verdict.number == ANSWER else f"finding {verdict.number}"
        why = echo(verdict.reason, MAX_REASON_CHARS) or "no reason given"
        found.append(refusal("meaning", verdict.verdict, where=label, reason=why))
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

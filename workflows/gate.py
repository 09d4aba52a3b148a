"""The coverage gate (pure): a submitted report passes, or fails with every gap at once.

The rules (DESIGN.md, "The gate"): every finding cites recorded evidence; every required question
has cited evidence; the cited evidence comes from `min_sources` independent source families; the
report states no figure its evidence does not and each finding shares substance with what it
cites (`workflows.substance`); contradicting evidence, by the model's stance or by the host's own
figure check (`conflicts`), is disclosed by its whole ID in a finding or in the limitations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from workflows.cleaning import echo
from workflows.families import families
from workflows.models import Brief, Evidence, Report, SourceRef
from workflows.rules import judged, refusal
from workflows.substance import (
    FACT_WORDS,
    MIN_SHARED_WORDS,
    Canonical,
    FigureProblem,
    Labelled,
    canonical,
    disagreement,
    figure_problems,
    figures,
    keywords,
    labelled,
    limitation_facts,
    mixed_script,
    says_disagree,
    stated_names,
    states_both,
    unsupported_negation,
)


class Concern(BaseModel):
    """A judgement rule's doubt about one claim (`workflows.rules`: a word matcher reading
    meaning). With a verifier configured it is not a refusal: the verifier must answer it, and
    the claim stands only if it is supported with the concern addressed."""

    where: str  # "finding 2", "the answer", "the limitations"
    text: str  # the refusal the rules give without a verifier


class GateResult(BaseModel):
    passed: bool
    gaps: list[str] = Field(default_factory=list)
    cited_evidence: list[str] = Field(default_factory=list)
    independent_sources: int = 0
    concerns: list[Concern] = Field(default_factory=list)  # only when a verifier is configured

    def concerns_of(self, where: str) -> list[str]:
        return [concern.text for concern in self.concerns if concern.where == where]


@dataclass
class _Found:
    """What the rules found: proof refusals are gaps; judgement refusals are gaps too, unless a
    `verifier` judges meaning after the gate, when they are concerns about their claim."""

    verifier: bool
    gaps: list[str] = field(default_factory=list)
    concerns: list[Concern] = field(default_factory=list)

    def add(self, claim: str, name: str, key: str, /, **fields: object) -> None:
        """Rule `name`'s refusal `key` about `claim` ("finding 2"), with its fields."""
        sentence = refusal(name, key, **fields)
        if self.verifier and judged(name, key):
            self.concerns.append(Concern(where=claim, text=sentence))
        else:
            self.gaps.append(sentence)


class Conflict(BaseModel):
    """Two pieces of evidence for one question, from different source families, that disagree."""

    question_id: str
    first: str  # evidence ids, first < second
    second: str
    first_says: str  # the figures that disagree: "30 seconds"
    second_says: str

    def sentence(self) -> str:
        return (
            f"{self.first} ({self.first_says}) and {self.second} ({self.second_says}) disagree "
            f"on {self.question_id}"
        )


def source_families(source_ids: list[str], sources: dict[str, SourceRef]) -> set[str]:
    """Distinct content families: a mirror with the same normalised text, or another rendering
    of the same text, is the same source (`workflows.families`)."""
    known = [sid for sid in source_ids if sid in sources]
    return set(families(known, sources).values())


def check(
    report: Report,
    evidence: dict[str, Evidence],
    sources: dict[str, SourceRef],
    brief: Brief,
    *,
    verifier: bool = False,
    composed: bool = False,
) -> GateResult:
    """Rules 1-8 of `workflows.rules` on a submitted report. With a `verifier`, what the
    judgement rules find is a concern for it to answer, not a gap. A `composed` report's answer
    is the host's own framing sentence: it is not checked."""
    report, evidence = _canonical(report), _canonical_evidence(evidence)
    found = _Found(verifier)
    found.gaps += _citation_gaps(report, evidence)
    cited = _cited_ids(report, evidence)
    found.gaps += _coverage_gaps(cited, evidence, brief)
    families = source_families(sorted({evidence[eid].source_id for eid in cited}), sources)
    if len(families) < brief.limits.min_sources:
        found.gaps.append(
            refusal("independent", "too_few", count=len(families), needed=brief.limits.min_sources)
        )
    for statement in _statements(report, cited, evidence, sources, brief, composed):
        statement.check(found)
    recorded = [Canonical(item.quote) for item in evidence.values()]
    for sentence in limitation_facts(Canonical(report.limitations), recorded):
        found.add("the limitations", "answer", "fact", sentence=echo(sentence, 60))
    conflicted = conflicts(evidence, sources)
    found.gaps += _undisclosed(report, evidence, conflicted)
    _one_sided(report, evidence, conflicted, found)
    return GateResult(
        passed=not found.gaps,
        gaps=found.gaps,
        cited_evidence=cited,
        independent_sources=len(families),
        concerns=found.concerns,
    )


def _canonical(report: Report) -> Report:
    """The report with its texts made canonical, once: every rule reads them as they are."""
    findings = [item.model_copy(update={"text": canonical(item.text)}) for item in report.findings]
    return report.model_copy(
        update={
            "answer": canonical(report.answer),
            "limitations": canonical(report.limitations),
            "findings": findings,
        }
    )


def _canonical_evidence(evidence: dict[str, Evidence]) -> dict[str, Evidence]:
    """The evidence with its quotes (and their sentences) made canonical, once."""
    return {
        eid: item.model_copy(
            update={"quote": canonical(item.quote), "sentence": canonical(item.sentence)}
        )
        for eid, item in evidence.items()
    }


def _cited_ids(report: Report, evidence: dict[str, Evidence]) -> list[str]:
    ids = [eid for finding in report.findings for eid in finding.evidence_ids]
    return sorted({eid for eid in ids if eid in evidence})


def _citation_gaps(report: Report, evidence: dict[str, Evidence]) -> list[str]:
    gaps: list[str] = []
    if not report.findings:
        gaps.append(refusal("cited", "no_findings"))
    for number, finding in enumerate(report.findings, start=1):
        if not finding.evidence_ids:
            gaps.append(refusal("cited", "no_evidence", number=number))
        unknown = [eid for eid in finding.evidence_ids if eid not in evidence]
        if unknown:
            named_ids = ", ".join(echo(eid, 12) for eid in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            gaps.append(refusal("cited", "unknown", number=number, ids=named_ids + more))
    return gaps


def _coverage_gaps(cited: list[str], evidence: dict[str, Evidence], brief: Brief) -> list[str]:
    covered = {evidence[eid].question_id for eid in cited}
    return [
        refusal("covered", "uncovered", question=question.id, text=question.text)
        for question in brief.questions
        if question.required and question.id not in covered
    ]


@dataclass
class _Statement:
    """One thing the report states, the evidence it is checked against, and how strictly."""

    where: str  # "finding 1", "the answer", "the limitations"
    text: Canonical
    quotes: list[Canonical]
    evidence_ids: list[str]
    whose: str  # "it cites", "the findings cite", "the run recorded"
    framing: list[Canonical]
    names: list[str] = field(default_factory=list)  # dates and versions of pages read
    shares: bool = True  # must share content words with its quotes
    negation: bool = True  # may negate only what a quote negates

    def check(self, found: _Found) -> None:
        mixed = mixed_script(self.text)
        if mixed:
            shown = ", ".join(echo(token, 20) for token in mixed[:5])
            found.gaps.append(refusal("figures", "mixed_script", where=self.where, tokens=shown))
        for problem in figure_problems(self.text, self.quotes, self.framing, self.names):
            key, fields = self._figure_gap(problem)
            found.add(self.where, "figures", key, **fields)
        negated = unsupported_negation(self.text, self.quotes) if self.negation else None
        if negated is not None:
            word, scope = negated[0], echo(negated[1], 50)
            found.add(self.where, "cited", "negates", where=self.where, word=word, scope=scope)
        if self.shares:
            own = _substance(self.text)
            shared = own & _substance(Canonical(" ".join(self.quotes)))
            # An answer of a word or two ("See the findings.") states nothing to share.
            needed = MIN_SHARED_WORDS
            if self.where == "the answer" and len(own) < FACT_WORDS:
                needed = 0
            if len(shared) < needed:
                found.add(
                    self.where, "cited", "shares", where=self.where, count=len(shared),
                    needed=needed,
                )  # fmt: skip

    def _figure_gap(self, problem: FigureProblem) -> tuple[str, dict[str, str]]:
        """The figures rule's refusal key for `problem`, and its fields."""
        fields = {
            "where": self.where,
            "states": "state" if self.where == "the limitations" else "states",
            "figure": echo(problem.figure, 40),
            "whose": self.whose,
        }
        if problem.deferrable:
            return "deferred", fields
        if problem.why.startswith("which"):
            return "missing", fields
        return "mismatch", {"why": problem.why, **fields}


def _statements(
    report: Report,
    cited: list[str],
    evidence: dict[str, Evidence],
    sources: dict[str, SourceRef],
    brief: Brief,
    composed: bool = False,
) -> list[_Statement]:
    """The findings (each against its own quotes), the answer (against all the findings cite)
    and the limitations' sentences that describe sources (against all recorded evidence). A
    finding and the answer are read against each quote in its whole sentence (the scope a
    fragment was cut from: "Within one message group, ...") and may name the dates and
    versions its quotes' pages state ("the 2023 post says ...")."""
    # Made canonical here, once: every rule below reads these texts as they are.
    framing = [canonical(text) for text in (brief.question, *(q.text for q in brief.questions))]
    said = {eid: Canonical(item.sentence or item.quote) for eid, item in evidence.items()}

    def names_of(ids: list[str]) -> list[str]:
        pages = [sources.get(evidence[eid].source_id) for eid in ids]
        return sorted({name for page in pages if page is not None for name in page.names})

    statements = []
    for number, finding in enumerate(report.findings, start=1):
        ids = [eid for eid in finding.evidence_ids if eid in evidence]
        if ids:  # otherwise a citation gap already
            quotes = [said[eid] for eid in ids]
            statements.append(
                _Statement(
                    f"finding {number}", Canonical(finding.text), quotes, ids, "it cites", framing,
                    names=names_of(ids),
                )
            )  # fmt: skip
    if cited and not composed:
        quotes = [said[eid] for eid in cited]
        statements.append(
            _Statement(
                "the answer", Canonical(report.answer), quotes, cited, "the findings cite", framing,
                names=names_of(cited),
            )
        )  # fmt: skip
    recorded = sorted(evidence)
    names = sorted({name for source in sources.values() for name in source.names})
    statements.append(
        _Statement(
            "the limitations",
            Canonical(report.limitations),
            [Canonical(evidence[eid].quote) for eid in recorded],
            recorded,
            "the run recorded",
            framing,
            names=names,
            shares=False,
            negation=False,
        )
    )
    return statements


def _substance(text: Canonical) -> set[str]:
    return keywords(text) | figures(text)


def _listed(stated: list[str]) -> str:
    shown = ", ".join(echo(figure, 20) for figure in stated[:5])
    return shown + (f" and {len(stated) - 5} more figures" if len(stated) > 5 else "")


def conflicts(
    evidence: dict[str, Evidence], sources: dict[str, SourceRef], involving: str | None = None
) -> list[Conflict]:
    """Evidence for one question from different source families whose stated figures disagree
    (only the pairs `involving` one evidence id, when given). Each quote is read once."""
    ordered = sorted(evidence.values(), key=lambda item: item.id)
    figures_of: dict[str, Labelled] = {}
    family: dict[str, str] = {}

    def read(item: Evidence) -> Labelled:
        if item.id not in figures_of:
            figures_of[item.id] = labelled(item.quote)
        return figures_of[item.id]

    def one_source(first: Evidence, second: Evidence) -> bool:
        if not family:  # worked out once, at the first pair that needs it
            family.update(families([item.source_id for item in ordered], sources))
        return family[first.source_id] == family[second.source_id]

    found = []
    for index, first in enumerate(ordered):
        for second in ordered[index + 1 :]:
            if involving is not None and involving not in (first.id, second.id):
                continue
            if first.question_id != second.question_id:
                continue
            if one_source(first, second):
                continue
            disagree = disagreement(read(first), read(second))
            if disagree is not None:
                found.append(
                    Conflict(
                        question_id=first.question_id,
                        first=first.id,
                        second=second.id,
                        first_says=disagree[0],
                        second_says=disagree[1],
                    )
                )
    return found


def must_disclose(evidence: dict[str, Evidence], found: list[Conflict]) -> list[str]:
    """Evidence ids a report must cite or name: `contradicts` stances and every conflict's pair."""
    ids = {item.id for item in evidence.values() if item.stance == "contradicts"}
    ids |= {eid for conflict in found for eid in (conflict.first, conflict.second)}
    return sorted(ids)


def named(evidence_id: str, text: str) -> bool:
    """The whole id appears in `text` as a token: E001 is not named by E0011 or XE001."""
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(evidence_id)}(?![A-Za-z0-9])", text) is not None


def _undisclosed(report: Report, evidence: dict[str, Evidence], found: list[Conflict]) -> list[str]:
    cited = {eid for finding in report.findings for eid in finding.evidence_ids}

    def disclosed(evidence_id: str) -> bool:
        return evidence_id in cited or named(evidence_id, report.limitations)

    gaps = [
        refusal("conflicts", "contradiction", evidence=item.id, question=item.question_id)
        for item in sorted(evidence.values(), key=lambda item: item.id)
        if item.stance == "contradicts" and not disclosed(item.id)
    ]
    gaps += [
        refusal("conflicts", "conflict", conflict=conflict.sentence())
        for conflict in found
        if not (disclosed(conflict.first) and disclosed(conflict.second))
    ]
    return gaps


def _one_sided(
    report: Report, evidence: dict[str, Evidence], conflicted: list[Conflict], found: _Found
) -> None:
    """A finding about a conflicted question states both values or says the sources disagree."""
    for number, finding in enumerate(report.findings, start=1):
        questions = {evidence[eid].question_id for eid in finding.evidence_ids if eid in evidence}
        for conflict in conflicted:
            if conflict.question_id not in questions or says_disagree(finding.text):
                continue
            if not states_both(finding.text, conflict.first_says, conflict.second_says):
                found.add(f"finding {number}", "conflicts", "one_side", number=number,
                          conflict=conflict.sentence())  # fmt: skip
                break


def page_names(texts: list[str], known: list[str]) -> list[str]:
    """The dates and versions `texts` (what the run read of a page) state, with those `known`
    from earlier reads of it (sorted)."""
    return sorted(stated_names(texts) | set(known))


def open_questions(brief: Brief, evidence: dict[str, Evidence]) -> list[str]:
    """Question ids with no recorded evidence at all (required first, then optional)."""
    covered = {item.question_id for item in evidence.values()}
    ordered = sorted(brief.questions, key=lambda question: not question.required)
    return [question.id for question in ordered if question.id not in covered]

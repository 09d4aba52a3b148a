"""The coverage gate (pure): a submitted report passes, or fails with every gap at once.

The rules (DESIGN.md, "The gate"): every finding cites recorded evidence; every required question
has cited evidence; the cited evidence comes from `min_sources` independent source families; the
report states no figure its evidence does not and each finding shares substance with what it
cites (`workflows.substance`); contradicting evidence, by the model's stance or by the host's own
figure check (`conflicts`), is disclosed by its whole ID in a finding or in the limitations.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from workflows.cleaning import echo
from workflows.models import Brief, Evidence, SourceRef
from workflows.substance import (
    MIN_SHARED_WORDS,
    Labelled,
    disagreement,
    figures,
    keywords,
    labelled,
    negates,
    unsupported_figures,
)

if TYPE_CHECKING:  # the finish tool runs the gate: its argument model names only a type here
    from workflows.tools.finish_research import FinishArgs


class GateResult(BaseModel):
    passed: bool
    gaps: list[str] = Field(default_factory=list)
    cited_evidence: list[str] = Field(default_factory=list)
    independent_sources: int = 0


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
    """Distinct content families: a mirror with the same normalised text is the same source."""
    return {_family(sid, sources) for sid in source_ids if sid in sources}


def _family(source_id: str, sources: dict[str, SourceRef]) -> str:
    source = sources.get(source_id)
    return (source.content_hash or source.url) if source else source_id


def check(
    report: FinishArgs,
    evidence: dict[str, Evidence],
    sources: dict[str, SourceRef],
    brief: Brief,
) -> GateResult:
    gaps = _citation_gaps(report, evidence)
    cited = _cited_ids(report, evidence)
    gaps += _coverage_gaps(cited, evidence, brief)
    families = source_families(sorted({evidence[eid].source_id for eid in cited}), sources)
    if len(families) < brief.limits.min_sources:
        gaps.append(
            f"the cited evidence comes from {len(families)} independent source(s); at least "
            f"{brief.limits.min_sources} are required (a mirror with the same text counts once)"
        )
    gaps += _support_gaps(report, cited, evidence, brief)
    gaps += _undisclosed(report, evidence, conflicts(evidence, sources))
    return GateResult(
        passed=not gaps,
        gaps=gaps,
        cited_evidence=cited,
        independent_sources=len(families),
    )


def _cited_ids(report: FinishArgs, evidence: dict[str, Evidence]) -> list[str]:
    ids = [eid for finding in report.findings for eid in finding.evidence_ids]
    return sorted({eid for eid in ids if eid in evidence})


def _citation_gaps(report: FinishArgs, evidence: dict[str, Evidence]) -> list[str]:
    gaps: list[str] = []
    if not report.findings:
        gaps.append("the report has no findings: each finding must cite recorded evidence")
    for number, finding in enumerate(report.findings, start=1):
        if not finding.evidence_ids:
            gaps.append(f"finding {number} cites no evidence")
        unknown = [eid for eid in finding.evidence_ids if eid not in evidence]
        if unknown:
            named = ", ".join(echo(eid, 12) for eid in unknown[:5])
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            gaps.append(f"finding {number} cites unknown evidence {named}{more}")
    return gaps


def _coverage_gaps(cited: list[str], evidence: dict[str, Evidence], brief: Brief) -> list[str]:
    covered = {evidence[eid].question_id for eid in cited}
    return [
        f"required question {question.id} has no cited evidence: {question.text}"
        for question in brief.questions
        if question.required and question.id not in covered
    ]


def _support_gaps(
    report: FinishArgs, cited: list[str], evidence: dict[str, Evidence], brief: Brief
) -> list[str]:
    """The report states only figures its cited quotes state; each finding shares their words."""
    framing = " ".join([brief.question, *(question.text for question in brief.questions)])
    gaps: list[str] = []
    for number, finding in enumerate(report.findings, start=1):
        quotes = [evidence[eid].quote for eid in finding.evidence_ids if eid in evidence]
        if not quotes:
            continue  # a citation gap already
        unsupported = unsupported_figures(finding.text, quotes, framing)
        if unsupported:
            gaps.append(
                f"finding {number} states {_listed(unsupported)}, which the evidence it cites "
                "does not contain"
            )
        if negates(finding.text, quotes):
            gaps.append(
                f"finding {number} negates what it states, and none of the evidence it cites "
                "says not, no or never: say what the quotes say"
            )
        shared = _substance(finding.text) & _substance(" ".join(quotes))
        if len(shared) < MIN_SHARED_WORDS:
            gaps.append(
                f"finding {number} shares {len(shared)} content word(s) or figure(s) with the "
                f"evidence it cites, at least {MIN_SHARED_WORDS} are needed: say what the "
                "quotes say"
            )
    unsupported = unsupported_figures(
        report.answer, [evidence[eid].quote for eid in cited], framing
    )
    if unsupported:
        gaps.append(f"the answer states {_listed(unsupported)}, which no cited evidence contains")
    recorded = [item.quote for item in evidence.values()]  # limitations may name uncited evidence
    unsupported = unsupported_figures(report.limitations, recorded, framing)
    if unsupported:
        gaps.append(
            f"the limitations state {_listed(unsupported)}, which no recorded evidence contains"
        )
    return gaps


def _substance(text: str) -> set[str]:
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

    def read(item: Evidence) -> Labelled:
        if item.id not in figures_of:
            figures_of[item.id] = labelled(item.quote)
        return figures_of[item.id]

    found = []
    for index, first in enumerate(ordered):
        for second in ordered[index + 1 :]:
            if involving is not None and involving not in (first.id, second.id):
                continue
            if first.question_id != second.question_id:
                continue
            if _family(first.source_id, sources) == _family(second.source_id, sources):
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


def _undisclosed(
    report: FinishArgs, evidence: dict[str, Evidence], found: list[Conflict]
) -> list[str]:
    cited = {eid for finding in report.findings for eid in finding.evidence_ids}

    def disclosed(evidence_id: str) -> bool:
        return evidence_id in cited or named(evidence_id, report.limitations)

    gaps = [
        f"contradicting evidence {item.id} for {item.question_id} is neither cited in a finding "
        "nor named in the limitations"
        for item in sorted(evidence.values(), key=lambda item: item.id)
        if item.stance == "contradicts" and not disclosed(item.id)
    ]
    gaps += [
        f"conflicting evidence: {conflict.sentence()}; cite or name both in the limitations"
        for conflict in found
        if not (disclosed(conflict.first) and disclosed(conflict.second))
    ]
    return gaps


def open_questions(brief: Brief, evidence: dict[str, Evidence]) -> list[str]:
    """Question ids with no recorded evidence at all (required first, then optional)."""
    covered = {item.question_id for item in evidence.values()}
    ordered = sorted(brief.questions, key=lambda question: not question.required)
    return [question.id for question in ordered if question.id not in covered]

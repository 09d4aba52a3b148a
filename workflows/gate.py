"""The coverage gate (pure): a submitted report passes, or fails with every gap at once."""

from __future__ import annotations

from pydantic import BaseModel, Field

from workflows.models import Brief, Evidence, FinishArgs, SourceRef


class GateResult(BaseModel):
    passed: bool
    gaps: list[str] = Field(default_factory=list)
    cited_evidence: list[str] = Field(default_factory=list)
    independent_sources: int = 0


def source_families(source_ids: list[str], sources: dict[str, SourceRef]) -> set[str]:
    """Distinct content families: a mirror with the same normalised text is the same source."""
    return {sources[sid].content_hash or sources[sid].url for sid in source_ids if sid in sources}


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
    gaps += _undisclosed_contradictions(report, cited, evidence)
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
            gaps.append(f"finding {number} cites unknown evidence {', '.join(unknown)}")
    return gaps


def _coverage_gaps(cited: list[str], evidence: dict[str, Evidence], brief: Brief) -> list[str]:
    covered = {evidence[eid].question_id for eid in cited}
    return [
        f"required question {question.id} has no cited evidence: {question.text}"
        for question in brief.questions
        if question.required and question.id not in covered
    ]


def _undisclosed_contradictions(
    report: FinishArgs, cited: list[str], evidence: dict[str, Evidence]
) -> list[str]:
    contradicting = [item for item in evidence.values() if item.stance == "contradicts"]
    return [
        f"contradicting evidence {item.id} for {item.question_id} is neither cited in a finding "
        "nor named in the limitations"
        for item in sorted(contradicting, key=lambda item: item.id)
        if item.id not in cited and item.id not in report.limitations
    ]


def open_questions(brief: Brief, evidence: dict[str, Evidence]) -> list[str]:
    """Question ids with no recorded evidence at all (required first, then optional)."""
    covered = {item.question_id for item in evidence.values()}
    ordered = sorted(brief.questions, key=lambda question: not question.required)
    return [question.id for question in ordered if question.id not in covered]

"""The host-composed report (pure): built only from recorded evidence, for unfinished runs."""

from __future__ import annotations

from workflows.gate import conflicts, must_disclose, open_questions
from workflows.models import (
    Brief,
    Evidence,
    Finding,
    Note,
    Report,
    SourceRef,
    StopReason,
    Submitted,
)

_WHY = {
    StopReason.STEP_LIMIT: "the step limit was reached",
    StopReason.TOKEN_LIMIT: "the token limit was reached",
    StopReason.DEADLINE: "the deadline passed",
    StopReason.CONTEXT_LIMIT: "the context limit was reached",
    StopReason.FINISH_ATTEMPTS_EXHAUSTED: "every finish attempt failed the coverage gate",
    StopReason.CANCELLED: "the run was cancelled",
    StopReason.OPERATOR_FINISH: "an operator asked it to finish",
    StopReason.PROVIDER_ERROR: "a model or search provider refused or kept failing",
    StopReason.INFRASTRUCTURE_ERROR: "a service the run depends on kept failing",
}


def compose(
    brief: Brief,
    evidence: dict[str, Evidence],
    sources: dict[str, SourceRef],
    stop_reason: StopReason,
    detail: str = "",
) -> Report:
    """One finding per question with evidence, citing all of it; the rest are open questions.
    Contradicting and conflicting evidence is named in the limitations."""
    findings = [
        Finding(
            text=f"{question.id} ({question.text}): " + " ".join(item.claim for item in items),
            evidence_ids=[item.id for item in items],
        )
        for question in brief.questions
        if (items := _evidence_for(question.id, evidence))
    ]
    unanswered = open_questions(brief, evidence)
    why = _WHY.get(stop_reason, str(stop_reason))
    limitations = [f"The investigation stopped because {why}{': ' + detail if detail else ''}."]
    if unanswered:
        limitations.append("Open questions: " + ", ".join(unanswered) + ".")
    found = conflicts(evidence, sources)
    contradicting = must_disclose(evidence, found)
    if contradicting:
        limitations.append("Contradicting evidence recorded: " + ", ".join(contradicting) + ".")
    limitations += [f"Conflict: {conflict.sentence()}." for conflict in found]
    return Report(
        answer=f"Partial answer to: {brief.question} (composed from recorded evidence only).",
        findings=findings,
        limitations=" ".join(limitations),
        open_questions=unanswered,
        composed=True,
    )


def unaccepted(
    report: Report, evidence: dict[str, Evidence], submitted: Submitted | None
) -> Report:
    """A composed report the run did not accept: its findings (the evidence claims) become the
    model's notes beside their quotes, and the model's last submission is kept, marked."""
    cited = dict.fromkeys(eid for finding in report.findings for eid in finding.evidence_ids)
    notes = [
        Note(evidence_id=eid, question_id=evidence[eid].question_id, claim=evidence[eid].claim)
        for eid in cited
        if eid in evidence
    ]
    return report.model_copy(update={"findings": [], "notes": notes, "submitted": submitted})


def _evidence_for(question_id: str, evidence: dict[str, Evidence]) -> list[Evidence]:
    return sorted(
        (item for item in evidence.values() if item.question_id == question_id),
        key=lambda item: item.id,
    )

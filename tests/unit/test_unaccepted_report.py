"""An incomplete run's report stays honest: the evidence claims are the model's notes beside
their quotes, never findings, and the model's last submission is kept, marked as not accepted."""

from __future__ import annotations

from activities.markdown import render_markdown
from workflows.composer import compose, unaccepted
from workflows.models import (
    Brief,
    Evidence,
    Finding,
    Question,
    Report,
    RunStatus,
    SourceRef,
    StopReason,
    Submitted,
)
from workflows.verification import Verification

BRIEF = Brief(
    question="How does Harbor Queue treat failing messages?",
    questions=[Question(id="Q1", text="How many attempts?"), Question(id="Q2", text="Timeout?")],
    allowed_hosts=["docs.example"],
)
EVIDENCE = {
    "E001": Evidence(
        id="E001",
        question_id="Q1",
        source_id="S1",
        claim="Messages are dead-lettered after 5 attempts.",
        stance="supports",
        quote="After 5 delivery attempts Harbor Queue moves a message to the dead-letter queue.",
    )
}
SOURCES = {"S1": SourceRef(id="S1", url="https://docs.example/dlq")}
SUBMITTED = Submitted(
    answer="Harbor Queue deletes a failing message after 5 attempts.",
    findings=[Finding(text="It deletes the message after 5 attempts.", evidence_ids=["E001"])],
    limitations="Q2 is open.",
    gaps=["finding 1 is contradicted by the quotes it cites, says the independent verifier: "
          "the quote says moves, not deletes"],
)  # fmt: skip


def test_the_evidence_claims_are_notes_and_the_last_submission_is_marked() -> None:
    composed = compose(BRIEF, EVIDENCE, SOURCES, StopReason.FINISH_ATTEMPTS_EXHAUSTED)
    assert composed.findings, "the composer's candidate findings (an operator's finish checks them)"

    report = unaccepted(composed, EVIDENCE, SUBMITTED)

    assert report.findings == []
    assert [(n.evidence_id, n.question_id, n.claim) for n in report.notes] == [
        ("E001", "Q1", "Messages are dead-lettered after 5 attempts.")
    ]
    assert report.submitted == SUBMITTED
    shown = render_markdown(
        report,
        list(EVIDENCE.values()),
        list(SOURCES.values()),
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
        question=BRIEF.question,
    )
    findings = shown.split("## Findings", 1)[1].split("\n## ", 1)[0]
    assert "None accepted" in findings and "dead-lettered" not in findings
    notes = shown.split("## The model's notes", 1)[1].split("\n## ", 1)[0]
    assert "Not verified" in notes and "**E001** (Q1): Messages are dead-lettered" in notes
    last = shown.split("## Submitted, not accepted", 1)[1]
    assert "It deletes the message after 5 attempts." in last
    assert "the quote says moves, not deletes" in last.split("Why not:", 1)[1]
    # The quote the notes rest on is shown, verbatim, under Evidence.
    assert "After 5 delivery attempts Harbor Queue moves a message" in shown


def test_an_answer_no_model_wrote_is_not_labelled_the_models() -> None:
    """The offline policy's report says no model took part: its answer says so too, where a
    model's answer says the model wrote it."""
    report = SUBMITTED_REPORT
    told = {
        mode: render_markdown(
            report,
            list(EVIDENCE.values()),
            list(SOURCES.values()),
            RunStatus.COMPLETED,
            StopReason.COVERAGE_GATE_PASSED,
            verification=Verification(mode=mode, verifier="m" if mode == "model" else ""),
        )
        for mode in ("deterministic", "model")
    }

    offline = told["deterministic"].split("## Answer\n\n", 1)[1].splitlines()[0]
    assert (
        offline == "*Written by the run's policy, not a model; every finding was checked "
        "against the quotes below.*"
    )
    assert "No model took part" in told["deterministic"]
    assert "Written by the model" not in told["deterministic"]
    assert told["model"].split("## Answer\n\n", 1)[1].startswith("*Written by the model;")


SUBMITTED_REPORT = Report(
    answer="Harbor Queue dead-letters a message after 5 attempts.",
    findings=[Finding(text="It dead-letters after 5 attempts.", evidence_ids=["E001"])],
    limitations="None identified.",
)

"""The host's reading of the verifier (pure): what each claim shows it, and which verdicts stand."""

from __future__ import annotations

import pytest

from tests.workflow.harness import make_brief
from workflows import verification
from workflows.models import Evidence, Finding, Report, SourceRef
from workflows.verification import (
    CONCERN_HOLDS,
    NOT_COPIED,
    UNANSWERED_CONCERN,
    Claim,
    ClaimQuote,
)

QUOTE = (
    "After a message has used up its delivery attempts, 5 by default, Harbor Queue moves it to "
    "the dead-letter queue.  It keeps its body and its ID."
)
CLAIM = Claim(
    number=1,
    text="Messages move to the DLQ after 5 attempts.",
    quotes=[ClaimQuote(evidence_id="E001", question_id="Q1", text=QUOTE)],
)


def test_a_supported_verdict_stands_with_a_sentence_copied_from_a_cited_quote() -> None:
    copied = "It keeps its\nbody and its ID."  # whitespace aside, word for word
    verdict = verification.settle(CLAIM, "supported", f"\u201c{copied}\u201d", "it says so")
    assert (verdict.verdict, verdict.evidence_id, verdict.sentence) == (
        "supported",
        "E001",
        "It keeps its body and its ID.",
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "",  # none at all
        "Harbor Queue deletes it.",  # not in the quote
        "it keeps its body and its ID.",  # another case
        "by default",  # too short to support anything
        "eeps its body and its",  # not on word boundaries
        "It keeps its body and its ID. Harbor Queue deletes it.",  # more than the quote holds
    ],
)
def test_supported_or_partly_without_a_copied_sentence_counts_as_not_supported(
    sentence: str,
) -> None:
    for said in ("supported", "partly"):
        verdict = verification.settle(CLAIM, said, sentence, "trust me")
        assert (verdict.verdict, verdict.said, verdict.reason) == (
            "not_supported",
            said,
            NOT_COPIED,
        )
        assert verification.gaps([verdict]) == [
            f"finding 1 is not supported by the quotes it cites, says the independent verifier: "
            f"{NOT_COPIED} (say only what the quotes state)"
        ]


def test_contradicted_and_not_supported_stand_without_a_sentence_and_are_gaps() -> None:
    contradicted = verification.settle(CLAIM, "contradicted", "", "it says moves, not deletes.")
    answer = CLAIM.model_copy(update={"number": verification.ANSWER})
    unsupported = verification.settle(answer, "not_supported", "", "")
    assert [v.verdict for v in (contradicted, unsupported)] == ["contradicted", "not_supported"]
    assert verification.gaps([contradicted, unsupported]) == [
        "finding 1 is contradicted by the quotes it cites, says the independent verifier: it "
        "says moves, not deletes. (say only what the quotes state)",
        "the answer is not supported by the quotes it cites, says the independent verifier: no "
        "reason given (say only what the quotes state)",
    ]


def test_partly_is_a_gap_with_the_verifiers_whole_reason() -> None:
    sentence = "It keeps its body and its ID."
    reason = "the quote says it keeps the body; " + "it says nothing of the attempts. " * 20
    verdict = verification.settle(CLAIM, "partly", sentence, reason)
    assert verdict.verdict == "partly"
    assert verdict.reason == " ".join(reason.split())  # whole, not cut at 300 characters
    assert verification.gaps([verdict]) == [
        "finding 1 is only partly supported by the quotes it cites, says the independent "
        f"verifier: {verdict.reason} (state only the supported part; move the rest to the "
        "limitations as open)"
    ]


def test_supported_stands_only_with_every_concern_answered_and_none_holding() -> None:
    sentence = "It keeps its body and its ID."
    doubted = CLAIM.model_copy(update={"concerns": ["finding 1 states 150 seconds ...", "x"]})
    assert verification.settle(doubted, "supported", sentence, "", holding=[False, False]).verdict
    unanswered = verification.settle(doubted, "supported", sentence, "", holding=[False])
    assert (unanswered.verdict, unanswered.reason) == ("not_supported", UNANSWERED_CONCERN)
    held = verification.settle(doubted, "supported", sentence, "ok", holding=[False, True])
    assert held.verdict == "not_supported"
    assert held.reason.startswith(f"{CONCERN_HOLDS}: x.")
    assert verification.settle(doubted, "supported", sentence, "", holding=[False] * 2).verdict == (
        "supported"
    )


def test_a_sentence_copied_from_the_whole_sentence_of_a_cut_quote_is_a_copy() -> None:
    cut = ClaimQuote(
        evidence_id="E002",
        question_id="Q1",
        text="Harbor Queue delivers messages strictly in the order they were sent",
        sentence="Within one message group, Harbor Queue delivers messages strictly in the order "
        "they were sent.",
    )
    claim = CLAIM.model_copy(update={"quotes": [cut]})
    said = "Within one message group, Harbor Queue delivers messages strictly in the order"
    assert verification.settle(claim, "contradicted", said, "").evidence_id == "E002"


def test_a_coverage_verdict_short_of_answering_is_a_gap_naming_its_question() -> None:
    claim = Claim(number=3, text="Does Requests support HTTP/2?", subject="coverage",
                  question_id="Q2", quotes=CLAIM.quotes)  # fmt: skip
    verdict = verification.settle(claim, "not_supported", "", "it says HTTP/1.1 only")
    assert verification.gaps([verdict]) == [
        "required question Q2 is not answered by the evidence cited for it, says the "
        "independent verifier (does not answer): it says HTTP/1.1 only (record evidence that "
        "answers it, or name it open in the limitations)"
    ]


def test_each_claim_shows_only_its_sub_questions_and_its_cited_quotes() -> None:
    brief = make_brief()
    evidence = {
        eid: Evidence(id=eid, question_id=qid, source_id="S1", claim="c", stance="supports",
                      quote=f"quote {eid}")
        for eid, qid in (("E001", "Q1"), ("E002", "Q2"), ("E003", "Q2"))
    }  # fmt: skip
    report = Report(
        answer="the answer",
        findings=[
            Finding(text="one", evidence_ids=["E001", "E009"]),  # an unknown id shows nothing
            Finding(text="two", evidence_ids=["E002", "E003", "E002"]),
        ],
    )
    concerns = {"finding 2": ["3 items?"]}
    sources = {"S1": SourceRef(id="S1", url="https://a.example/p", title="P", names=["1.4"])}
    report.limitations = "Q3 was not investigated at all."
    claims = verification.claims(report, evidence, brief, sources, lambda w: concerns.get(w, []))
    required = [question for question in brief.questions if question.required]
    assert [(c.number, c.subject, c.text, c.questions, [q.evidence_id for q in c.quotes],
             c.concerns) for c in claims] == [
        (0, "answer", "the answer", [brief.question], ["E001", "E002", "E003"], []),
        (1, "finding", "one", ["timeout"], ["E001"], []),
        (2, "finding", "two", ["attempts"], ["E002", "E003"], ["3 items?"]),
        (3, "limitations", report.limitations, [brief.question], ["E001", "E002", "E003"], []),
        *[
            (4 + index, "coverage", question.text, [question.text],
             [eid for eid in ("E001", "E002", "E003") if evidence[eid].question_id == question.id],
             [])
            for index, question in enumerate(required)
        ],
    ]  # fmt: skip
    assert claims[2].quotes[0].text == "quote E002"
    assert (claims[1].quotes[0].title, claims[1].quotes[0].url, claims[1].quotes[0].dated) == (
        "P",
        "https://a.example/p",
        ["1.4"],
    )
    composed = verification.claims(report, evidence, brief, sources, composed=True)
    assert [c.subject for c in composed] == ["finding", "finding"] + ["coverage"] * len(required)

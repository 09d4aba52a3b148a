"""The host's reading of the verifier (pure): what each claim shows it, and which verdicts stand."""

from __future__ import annotations

import pytest

from tests.workflow.harness import make_brief
from workflows import verification
from workflows.models import Evidence, Finding
from workflows.tools import FinishArgs
from workflows.verification import NOT_COPIED, ONLY_PARTLY, Claim, ClaimQuote

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


def test_partly_stands_unless_the_rules_left_a_figure_to_the_verifier() -> None:
    sentence = "It keeps its body and its ID."
    assert verification.settle(CLAIM, "partly", sentence, "").verdict == "partly"
    assert verification.gaps([verification.settle(CLAIM, "partly", sentence, "")]) == []
    deferred = CLAIM.model_copy(update={"deferred": ["150 seconds"]})
    verdict = verification.settle(deferred, "partly", sentence, "")
    assert verdict.verdict == "not_supported"
    assert verdict.reason == f"{ONLY_PARTLY} 150 seconds"
    assert verification.settle(deferred, "supported", sentence, "").verdict == "supported"


def test_each_claim_shows_only_its_sub_questions_and_its_cited_quotes() -> None:
    brief = make_brief()
    evidence = {
        eid: Evidence(id=eid, question_id=qid, source_id="S1", claim="c", stance="supports",
                      quote=f"quote {eid}")
        for eid, qid in (("E001", "Q1"), ("E002", "Q2"), ("E003", "Q2"))
    }  # fmt: skip
    report = FinishArgs(
        answer="the answer",
        findings=[
            Finding(text="one", evidence_ids=["E001", "E009"]),  # an unknown id shows nothing
            Finding(text="two", evidence_ids=["E002", "E003", "E002"]),
        ],
    )
    claims = verification.claims(report, evidence, brief, {"finding 2": ["3 items"]})
    assert [(c.number, c.text, c.questions, [q.evidence_id for q in c.quotes], c.deferred)
            for c in claims] == [
        (0, "the answer", [brief.question], ["E001", "E002", "E003"], []),
        (1, "one", ["timeout"], ["E001"], []),
        (2, "two", ["attempts"], ["E002", "E003"], ["3 items"]),
    ]  # fmt: skip
    assert claims[2].quotes[0].text == "quote E002"

"""The coverage gate: each of its rules failing and passing, and every gap reported at once."""

from __future__ import annotations

from workflows.gate import check, open_questions
from workflows.models import Brief, Evidence, Finding, Report, SourceRef, Stance

SOURCES = {
    "S1": SourceRef(id="S1", url="https://a.example/one", content_hash="hash-one"),
    "S2": SourceRef(id="S2", url="https://b.example/two", content_hash="hash-two"),
    # A mirror: a different URL serving the same normalised text as S1.
    "S3": SourceRef(id="S3", url="https://mirror.example/one", content_hash="hash-one"),
}


def brief(min_sources: int = 2, optional: bool = False) -> Brief:
    questions: list[dict[str, object]] = [
        {"id": "Q1", "text": "timeout"},
        {"id": "Q2", "text": "attempts"},
    ]
    if optional:
        questions.append({"id": "Q3", "text": "history", "required": False})
    return Brief.model_validate(
        {
            "question": "How does the queue behave?",
            "questions": questions,
            "allowed_hosts": ["a.example", "b.example", "mirror.example"],
            "limits": {"min_sources": min_sources},
        }
    )


def evidence(*items: tuple[str, str, str, Stance]) -> dict[str, Evidence]:
    """(id, question, source, stance) tuples as recorded evidence."""
    return {
        eid: Evidence(id=eid, question_id=qid, source_id=sid, claim="c", stance=stance, quote=QUOTE)
        for eid, qid, sid, stance in items
    }


QUOTE = "The queue retries a message until its timeout, counting delivery attempts."
FINDING = "The queue counts delivery attempts of a message."
SUPPORTED = evidence(("E001", "Q1", "S1", "supports"), ("E002", "Q2", "S2", "supports"))


def report(*cited: list[str], limitations: str = "") -> Report:
    findings = [Finding(text=FINDING, evidence_ids=ids) for ids in cited]
    return Report(answer="answer", findings=findings, limitations=limitations)


def test_a_report_citing_both_questions_from_two_sources_passes() -> None:
    verdict = check(report(["E001"], ["E002"]), SUPPORTED, SOURCES, brief())

    assert verdict.passed, verdict.gaps
    assert verdict.gaps == []
    assert verdict.cited_evidence == ["E001", "E002"]
    assert verdict.independent_sources == 2


def test_a_report_without_findings_fails() -> None:
    verdict = check(report(), SUPPORTED, SOURCES, brief())

    assert not verdict.passed
    assert "the report has no findings: each finding must cite recorded evidence" in verdict.gaps


def test_a_finding_without_evidence_ids_is_a_gap() -> None:
    verdict = check(report(["E001", "E002"], []), SUPPORTED, SOURCES, brief())

    assert verdict.gaps == ["finding 2 cites no evidence"]


def test_an_unknown_evidence_id_is_a_gap() -> None:
    verdict = check(report(["E001", "E099"], ["E002"]), SUPPORTED, SOURCES, brief())

    assert verdict.gaps == ["finding 1 cites unknown evidence E099"]


def test_a_required_question_without_cited_evidence_is_a_gap() -> None:
    recorded = {**SUPPORTED, **evidence(("E003", "Q1", "S2", "supports"))}

    verdict = check(report(["E001", "E003"]), recorded, SOURCES, brief())

    assert verdict.gaps == ["required question Q2 has no cited evidence: attempts"]


def test_recorded_but_uncited_evidence_does_not_cover_a_question() -> None:
    verdict = check(report(["E001"]), SUPPORTED, SOURCES, brief(min_sources=1))

    assert verdict.gaps == ["required question Q2 has no cited evidence: attempts"]


def test_fewer_independent_sources_than_min_sources_is_a_gap() -> None:
    recorded = evidence(("E001", "Q1", "S1", "supports"), ("E002", "Q2", "S1", "supports"))

    verdict = check(report(["E001"], ["E002"]), recorded, SOURCES, brief(min_sources=2))

    assert not verdict.passed
    assert verdict.independent_sources == 1
    assert verdict.gaps == [
        "the cited evidence comes from 1 independent source(s); at least 2 are required "
        "(a mirror or another rendering of the same text counts once)"
    ]


def test_min_sources_of_one_accepts_a_single_source() -> None:
    recorded = evidence(("E001", "Q1", "S1", "supports"), ("E002", "Q2", "S1", "supports"))

    verdict = check(report(["E001"], ["E002"]), recorded, SOURCES, brief(min_sources=1))

    assert verdict.passed, verdict.gaps


def test_a_mirror_with_the_same_content_counts_once() -> None:
    recorded = evidence(("E001", "Q1", "S1", "supports"), ("E002", "Q2", "S3", "supports"))

    verdict = check(report(["E001"], ["E002"]), recorded, SOURCES, brief())

    assert not verdict.passed
    assert verdict.independent_sources == 1
    assert any("1 independent source(s)" in gap for gap in verdict.gaps), verdict.gaps


def test_undisclosed_contradicting_evidence_is_a_gap() -> None:
    recorded = {**SUPPORTED, **evidence(("E003", "Q1", "S2", "contradicts"))}

    verdict = check(report(["E001"], ["E002"]), recorded, SOURCES, brief())

    assert verdict.gaps == [
        "contradicting evidence E003 for Q1 is neither cited in a finding nor named in the "
        "limitations"
    ]


def test_contradicting_evidence_cited_in_a_finding_is_disclosed() -> None:
    recorded = {**SUPPORTED, **evidence(("E003", "Q1", "S2", "contradicts"))}

    verdict = check(report(["E001", "E003"], ["E002"]), recorded, SOURCES, brief())

    assert verdict.passed, verdict.gaps


def test_contradicting_evidence_named_in_the_limitations_is_disclosed() -> None:
    recorded = {**SUPPORTED, **evidence(("E003", "Q1", "S2", "contradicts"))}
    disclosed = report(["E001"], ["E002"], limitations="E003 reports a different timeout instead.")

    verdict = check(disclosed, recorded, SOURCES, brief())

    assert verdict.passed, verdict.gaps


def test_an_optional_question_without_evidence_does_not_block() -> None:
    verdict = check(report(["E001"], ["E002"]), SUPPORTED, SOURCES, brief(optional=True))

    assert verdict.passed, verdict.gaps
    assert open_questions(brief(optional=True), SUPPORTED) == ["Q3"]


def test_open_questions_lists_required_before_optional() -> None:
    optional_first = Brief.model_validate(
        {
            "question": "How does the queue behave?",
            "questions": [
                {"id": "Q3", "text": "history", "required": False},
                {"id": "Q1", "text": "timeout"},
                {"id": "Q2", "text": "attempts"},
            ],
            "allowed_hosts": ["a.example"],
        }
    )
    assert open_questions(optional_first, {}) == ["Q1", "Q2", "Q3"]


def test_a_failing_report_returns_every_gap_at_once() -> None:
    recorded = evidence(
        ("E001", "Q1", "S1", "supports"),
        ("E002", "Q2", "S3", "supports"),  # mirror of S1
        ("E003", "Q1", "S2", "contradicts"),
    )

    verdict = check(report(["E001", "E042"], []), recorded, SOURCES, brief())

    assert not verdict.passed
    assert verdict.gaps == [
        "finding 1 cites unknown evidence E042",
        "finding 2 cites no evidence",
        "required question Q2 has no cited evidence: attempts",
        "the cited evidence comes from 1 independent source(s); at least 2 are required "
        "(a mirror or another rendering of the same text counts once)",
        "contradicting evidence E003 for Q1 is neither cited in a finding nor named in the "
        "limitations",
    ]


# Number forms the quantity reader does not read: each must be refused unless a quote writes it.
UNREAD_QUOTE = "The default visibility timeout is 30 seconds, after 5 delivery attempts it moves."


def _one_finding(text: str, quote: str = UNREAD_QUOTE, limitations: str = "") -> list[str]:
    recorded = {
        "E001": Evidence(
            id="E001", question_id="Q1", source_id="S1", claim="c", stance="supports", quote=quote
        )
    }
    submitted = Report(
        answer="See the finding.",
        findings=[Finding(text=text, evidence_ids=["E001"])],
        limitations=limitations,
    )
    one = brief(min_sources=1).model_copy(update={"questions": brief().questions[:1]})
    return check(submitted, recorded, SOURCES, one).gaps


def test_a_figure_in_a_form_the_reader_cannot_read_is_refused_unless_quoted() -> None:
    for figure in ["9e1", "9.0E+1", "0x5A", "90_000", "9/10"]:
        stated = f"The default visibility timeout is {figure} seconds, after delivery attempts."
        gaps = _one_finding(stated)
        assert any(f"states {figure}," in gap for gap in gaps), (figure, gaps)
        quoted = f"The default visibility timeout is {figure} seconds, after delivery attempts."
        assert _one_finding(stated, quote=quoted) == [], figure
    gaps = _one_finding("The visibility timeout is 30 seconds, moved after max_attempts=9.")
    assert any("states 9," in gap for gap in gaps), gaps
    honest = "The visibility timeout is 30 seconds: set max_attempts=5 delivery attempts."
    assert _one_finding(honest) == []
    # A URL's path is no figure.
    cited = "The default visibility timeout is 30 seconds, after 5 delivery attempts."
    assert (
        _one_finding(cited, limitations="The page https://a.example/2023/05/notes was not read.")
        == []
    )


def test_a_finding_may_name_the_date_or_release_its_quotes_pages_state() -> None:
    dated = SourceRef(id="S2", url="https://b.example/2023-post", names=["1.4", "2023-04-18"])
    sources = {**SOURCES, "S2": dated}
    recorded = evidence(("E001", "Q1", "S1", "supports"), ("E002", "Q2", "S2", "supports"))
    said = "The 2023 post, for release 1.4, says the queue counts delivery attempts of a message."
    submitted = Report(
        answer=f"{said} So does the reference.",
        findings=[Finding(text=FINDING, evidence_ids=["E001"]),
                  Finding(text=said, evidence_ids=["E002"])],
        limitations="",
    )  # fmt: skip
    assert check(submitted, recorded, sources, brief()).gaps == []
    # Not a date a page it does not cite states.
    elsewhere = submitted.model_copy(
        update={"findings": [Finding(text=said, evidence_ids=["E001", "E002"][:1]),
                             Finding(text=FINDING, evidence_ids=["E002"])]}
    )  # fmt: skip
    gaps = check(elsewhere, recorded, sources, brief()).gaps
    assert "finding 1 states 2023, which the evidence it cites does not state" in gaps, gaps


def test_a_finding_is_read_against_the_whole_sentence_its_quote_was_cut_from() -> None:
    whole = "Within one message group, the queue counts delivery attempts of a message in order."
    fragment = "the queue counts delivery attempts of a message in order"
    recorded = {
        eid: item.model_copy(update={"quote": fragment, "sentence": whole})
        for eid, item in SUPPORTED.items()
    }
    scoped = report(["E001"], ["E002"]).model_copy(
        update={"findings": [Finding(text=whole, evidence_ids=["E001"]),
                             Finding(text=FINDING, evidence_ids=["E002"])]}
    )  # fmt: skip
    assert check(scoped, recorded, SOURCES, brief()).gaps == []
    unread = {eid: item.model_copy(update={"sentence": ""}) for eid, item in recorded.items()}
    gaps = check(scoped, unread, SOURCES, brief()).gaps
    assert "finding 1 states one message group, which the evidence it cites does not state" in gaps

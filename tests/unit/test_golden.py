"""Golden sets: what a file must hold, and how a run's cited evidence scores against the labels."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest

from baselines.golden import Cited, GoldenSet, load_golden, score
from starter.evaluation import figures, render, summarise
from workflows.rules import RULES, refusal, refused_by

GOLDEN = GoldenSet.model_validate(
    {
        "host": "docs.example",
        "briefs": [
            {
                "question": "How does caching work?",
                "questions": [
                    {
                        "id": "Q1",
                        "text": "What is cached?",
                        "pages": ["cache.html"],
                        "phrase": "Hot",
                    },
                    {"id": "Q2", "text": "When?", "pages": ["https://other.example/when"]},
                ],
            }
        ],
    }
)
ENTRY = GOLDEN.briefs[0]


def cited(question: str, url: str, quote: str = "quote", digest: str = "h1") -> Cited:
    return Cited(question_id=question, url=url, content_hash=digest, quote=quote)


def test_a_question_is_recalled_by_cited_evidence_on_its_own_pages_only() -> None:
    result = score(
        GOLDEN,
        ENTRY,
        [
            cited("Q1", "https://docs.example/cache.html", "hot keys stay", "h1"),
            cited("Q2", "https://docs.example/cache.html", "later", "h1"),  # Q1's page, not Q2's
            cited("Q1", "https://docs.example/other.html", "other", "h2"),
        ],
    )

    assert result.as_dict() == {
        "questions": 2,
        "recalled": 1,
        "cited": 3,
        "on_label": 1,
        "phrases": 1,
        "phrase_hits": 1,
        "sources": 2,
        "phrase_misses": 0,
    }


def test_a_required_question_whose_quotes_lack_its_phrase_is_a_miss() -> None:
    page = "https://docs.example/cache.html"
    missed = score(GOLDEN, ENTRY, [cited("Q1", page, "cold keys go"), cited("Q2", page, "hot")])
    assert (missed.phrase_hits, missed.phrase_misses) == (0, 1), "Q2's quote holds Q1's phrase"
    spread = score(GOLDEN, ENTRY, [cited("Q1", page, "the HOT\n  keys"), cited("Q2", page)])
    assert (spread.phrase_hits, spread.phrase_misses) == (1, 0), "case and line breaks aside"
    marked = score(GOLDEN, ENTRY, [cited("Q1", page, "the `hot` keys"), cited("Q2", page)])
    assert (marked.phrase_hits, marked.phrase_misses) == (1, 0), "inline-code marks aside"
    optional = ENTRY.model_copy(
        update={"questions": [ENTRY.questions[0].model_copy(update={"required": False})]}
    )
    assert score(GOLDEN, optional, [cited("Q1", page, "cold")]).phrase_misses == 0


def test_a_completed_run_missing_a_phrase_counts_as_completed_wrong() -> None:
    page = "https://docs.example/cache.html"
    right = score(GOLDEN, ENTRY, [cited("Q1", page, "hot keys")]).as_dict()
    wrong = score(GOLDEN, ENTRY, [cited("Q1", page, "cold keys")]).as_dict()
    base = {"arm": "offline", "golden": "g.json", "brief": 1, "question": "q",
            "status": "completed", "stop_reason": "coverage_gate_passed", "steps": 7,
            "tokens": 10, "seconds": 1.0}  # fmt: skip
    runs = [
        base | right | {"completed": True, "verified": True},
        base | wrong | {"completed": True, "brief": 2},
        base | wrong | {"completed": False, "stop_reason": "step_limit", "brief": 3},
    ]
    summary = summarise(runs)
    assert (summary["completed"], summary["completed_correct"]) == (2, 1)
    assert (summary["completed_wrong"], summary["incomplete"]) == (1, 1)
    table = render({"golden": [{"file": "g.json", "briefs": 3}], "arms": ["offline"],
                    "by_golden": {"g.json": {"offline": summary}}, "runs": runs})  # fmt: skip
    assert (summary["completed_verified"], summary["completed_unverified"]) == (1, 1)
    assert (
        "| g.json | offline | 3 | 1 | 1 | 1 | 1 | 1 | 3/6 | 3/6 | 0 | 0.0 | 10 | 7.0 | 1.0 |"
        in table
    )
    assert "✗ wrong (unverified)" in table and "step_limit" in table


def _fields(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


def test_an_incomplete_run_refused_only_for_its_sources_is_short_of_sources() -> None:
    """Its last refused report covered every required question: the gate wanted another
    independent source, nothing else (the column that says how many runs a corpus's single
    page of answers holds back)."""
    assert refused_by(refusal("independent", "too_few", count=1, needed=2)) == "independent"
    assert refused_by(refusal("cited", "unknown", number=2, ids="E009, E010")) == "cited"
    covered = refusal("covered", "uncovered", question="Q2", text="Is it fine?")
    assert refused_by(covered) == "covered", "not the figures rule's '{where} {states} ...'"
    assert refused_by("fine") is None
    assert refused_by("the verifier is unavailable right now") is None, "no rule's words"
    empty = refusal("covered", "uncovered", question="Q1", text="")
    assert refused_by(empty) == "covered", "a field may be empty"
    for rule in RULES:  # every refusal, its fields filled, is its own rule's
        for text in rule.refusals.values():
            fields = {name: "states" if name == "states" else "Q1 x" for name in _fields(text)}
            assert refused_by(text.format(**fields)) == rule.name, text
    page = "https://docs.example/cache.html"
    scored = score(GOLDEN, ENTRY, [cited("Q1", page, "hot keys")]).as_dict()
    base = {"arm": "offline", "golden": "g.json", "brief": 1, "question": "q",
            "status": "incomplete", "stop_reason": "step_limit", "completed": False,
            "steps": 20, "tokens": 10, "seconds": 1.0} | scored  # fmt: skip
    runs = [
        base | {"refused_by": ["independent"]},
        base | {"refused_by": ["covered", "independent"], "brief": 2},
        base | {"refused_by": [], "brief": 3},
        base
        | {
            "refused_by": ["independent"],
            "completed": True,
            "status": "completed",
            "stop_reason": "coverage_gate_passed",
            "brief": 4,
        },
    ]
    summary = summarise(runs)
    assert summary["short_of_sources"] == 1
    table = render({"golden": [{"file": "g.json", "briefs": 4}], "arms": ["offline"],
                    "by_golden": {"g.json": {"offline": summary}}, "runs": runs})  # fmt: skip
    assert "step_limit (short of sources)" in table
    assert table.count("(short of sources)") == 1


def test_the_brief_takes_the_sets_host_and_the_summary_adds_runs_up() -> None:
    brief = GOLDEN.brief(ENTRY)
    assert brief.allowed_hosts == ["docs.example"]
    assert [q.id for q in brief.questions] == ["Q1", "Q2"]

    run = {"arm": "offline", "golden": "g.json", "brief": 1, "question": "How | why?",
           "completed": True, "status": "completed", "stop_reason": "coverage_gate_passed",
           **score(GOLDEN, ENTRY, [cited("Q1", "https://docs.example/cache.html")]).as_dict(),
           "steps": 7, "tokens": 1000, "seconds": 1.5}  # fmt: skip
    page = "https://docs.example/cache.html"
    off = score(GOLDEN, ENTRY, [cited("Q1", page), cited("Q2", page)]).as_dict()
    summary = summarise([run, run | {"completed": False, "steps": 9}, run | off])
    assert (summary["completed"], summary["recalled"], summary["precision"]) == (2, 3, 0.75)
    assert summary["clean"] == 1, "completed with a citation off its question's pages: not clean"
    summary = summarise([run, run | {"completed": False, "steps": 9}])
    assert summary["mean_steps"] == 8.0
    table = render({"golden": [{"file": "g.json", "briefs": 1}], "arms": ["offline"],
                    "summary": {"offline": summary}, "runs": [run]})  # fmt: skip
    assert (
        "| all | offline | 2 | 0 | 1 | 0 | 1 | 1 | 2/4 | 2/4 | 0 | 0.0 | 1,000 | 8.0 | 1.5 |"
        in table
    )
    assert "g.json 1: How \\| why?" in table, "a question cannot break the table"


def test_the_figures_of_two_evaluations_of_the_same_code_compare_equal() -> None:
    scores = score(GOLDEN, ENTRY, [cited("Q1", "https://docs.example/cache.html")]).as_dict()
    run = {"arm": "offline", "golden": "g.json", "brief": 1, "question": "q", **scores,
           "status": "completed", "completed": True, "steps": 7, "tokens": 1000}  # fmt: skip

    def report(run_id: str, seconds: float, quote: str) -> dict[str, Any]:
        varying = {"run_id": run_id, "seconds": seconds, "cited_evidence": [{"quote": quote}]}
        summary = summarise([run | varying])
        return {"golden": [{"file": "g.json", "briefs": 1}], "arms": ["offline"],
                "summary": {"offline": summary}, "by_golden": {"g.json": {"offline": summary}},
                "runs": [run | varying]}  # fmt: skip

    first, second = figures(report("a-1", 1.5, "x")), figures(report("b-2", 1.5, "y"))
    assert first == second
    assert first["runs"] == [run], "each run's outcome and scores, without id, time or quotes"
    assert first["summary"]["offline"]["recalled"] == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "is not JSON: Expecting property name enclosed in double quotes at line 1"),
        ('{"briefs": []}', ": briefs: List should have at least 1 item"),
        (
            json.dumps(
                {
                    "briefs": [
                        {"question": "q", "questions": [{"id": "Q1", "text": "t", "pages": ["a"]}]}
                    ]
                }
            ),
            "brief 'q' names no allowed host",
        ),
    ],
)
def test_a_bad_golden_file_is_refused_in_one_sentence(
    tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "golden.json"
    path.write_text(content)

    with pytest.raises(ValueError, match=r"^golden set ") as raised:
        load_golden(path)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)

"""Real-model runs as tests: every refusal the host gave in seven recorded investigations of the
Celery documentation (tests/transcripts/celery.json, from ../shared/real-model/celery), judged
FALSE (the step was correct: its quote says what the claim says) or FAIR (the model was wrong).

Each case runs the real rules on the recorded arguments, as the workflow parses them: a record
through the evidence rules with the quote's page context (its section heading, the passage before
it and the passage's text before the quote, as the ledger gives them), a finish through the gate
with the evidence recorded before that step. With no verifier, a FALSE refusal must now pass and
a FAIR one must still be refused, by the same rule as then.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from activities.evidence import claim_sentences
from activities.pages.extract import find_quote
from workflows.gate import check, page_names
from workflows.models import Brief, Evidence, SourceRef, ToolCall
from workflows.rules import refused_by
from workflows.substance import distinctive_words, evidence_problem
from workflows.tools import FinishArgs, RecordEvidenceArgs, parse_call

TRANSCRIPTS = json.loads((Path(__file__).parents[1] / "transcripts" / "celery.json").read_text())
CASES: list[dict[str, Any]] = TRANSCRIPTS["cases"]
HOST = "docs.celeryq.example"


def _id(case: dict[str, Any]) -> str:
    return f"{case['run']}-step{case['step']}-{case['verdict']}"


def brief(run: str) -> Brief:
    recorded = TRANSCRIPTS["runs"][run]["brief"]
    return Brief.model_validate({**recorded, "allowed_hosts": [HOST]})


def parsed(case: dict[str, Any]) -> Any:
    call = ToolCall(name=case["tool"], arguments=json.dumps(case["arguments"]))
    return parse_call(call)


def record_problem(case: dict[str, Any]) -> str | None:
    """The evidence rules on a recorded record_evidence call, as `activities.evidence` runs them:
    the quote as it would be stored and the page text it sits under."""
    args = parsed(case)
    assert isinstance(args, RecordEvidenceArgs)
    page = case["page"]
    passage = page["passage"]
    if args.passage_id is not None:
        first, last = claim_sentences(passage, args.claim)
    else:
        span = find_quote(passage, args.quote or "")
        assert span is not None, "the quote is in the vendored passage"
        first, last = span
    context = f"{page['section']} {page['passage_before']}"
    before = passage[max(0, first - 1_000) : first]
    if before.strip():
        context = f"{context} {before}"
    run_brief = brief(case["run"])
    texts = {question.id: question.text for question in run_brief.questions}
    terms = distinctive_words(texts[args.question_id], run_brief.question, list(texts.values()))
    return evidence_problem(
        passage[first:last], context, args.claim, terms, texts[args.question_id]
    )


def finish_gaps(case: dict[str, Any]) -> list[str]:
    """The gate, without a verifier, on a recorded finish_research call."""
    args = parsed(case)
    assert isinstance(args, FinishArgs)
    run = TRANSCRIPTS["runs"][case["run"]]
    evidence = {
        item["id"]: Evidence.model_validate({k: v for k, v in item.items() if k != "step"})
        for item in run["evidence"]
        if item["step"] < case["step"]
    }
    sources = {
        item["source_id"]: SourceRef(
            id=item["source_id"],
            url=item["url"],
            host=HOST,
            title=item["title"],
            content_hash=item["content_hash"],
            sketch=item["sketch"],
            # what the limitations may name of the page: its URL's and title's versions (the
            # run also read its passages, whose names these limitations do not need)
            names=page_names([item["url"], item["title"]], []),
        )
        for item in run["sources"]
    }
    return check(args, evidence, sources, brief(case["run"])).gaps


def refusals(case: dict[str, Any]) -> list[str]:
    if case["tool"] == "record_evidence":
        problem = record_problem(case)
        return [] if problem is None else [problem]
    return finish_gaps(case)


@pytest.mark.parametrize("case", [c for c in CASES if c["verdict"] == "FALSE"], ids=_id)
def test_a_correct_step_the_host_refused_is_accepted(case: dict[str, Any]) -> None:
    assert refusals(case) == [], f"{case['why']}; refused then: {case['refused']}"


@pytest.mark.parametrize("case", [c for c in CASES if c["verdict"] == "FAIR"], ids=_id)
def test_a_wrong_step_is_still_refused_by_the_same_rule(case: dict[str, Any]) -> None:
    now = refusals(case)

    assert now, case["why"]
    assert {refused_by(gap) for gap in now} == set(case["rules"]), now


def test_the_vendored_transcripts_hold_every_case_of_the_table() -> None:
    # celery/README.md's table: 9 FALSE refusals (two in b6 for one claim) and 3 FAIR ones on
    # the floor's rules (b3's read of a URL no search gave is the navigation rule's, not here).
    verdicts = [case["verdict"] for case in CASES]
    assert (verdicts.count("FALSE"), verdicts.count("FAIR")) == (9, 3)

"""`research audit`'s checks on two recorded runs (tests/exports: a completed one and one stopped
by the step limit, re-recorded with `python -m tests.exports.record`): both pass every check, and
each check fails once the data it guards is tampered with."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import WorkflowHistory

from activities.ledger import RunRows
from activities.ledger.review import VerdictRow
from activities.markdown import render_markdown
from starter.audit import CHECKS, AuditData, audit_table, run_checks
from starter.export import load_export, write_export
from starter.history import ActivityFact, HistoryFacts, history_facts
from workflows import contracts, verification
from workflows.models import Report, StopReason, Usage
from workflows.scope import RunScope
from workflows.tools.read_page import READ_PAGE
from workflows.tools.record_evidence import RECORD_EVIDENCE
from workflows.tools.search_web import SEARCH_WEB
from workflows.verification import VERIFY, Verification, VerifyInput, VerifyResult

EXPORTS = Path(__file__).parent.parent / "exports"
Tamper = Callable[[RunRows, HistoryFacts], Any]


@cache
def _recorded(name: str) -> tuple[RunRows, HistoryFacts]:
    if name == VERIFIED:
        return _verified(*_recorded("demo"))
    rows, history = load_export(EXPORTS / name)
    assert history is not None, f"tests/exports/{name} holds no history.json"
    return rows, history_facts(history)


VERIFIED = "demo-verified"  # the demo run, as if a verifier model had read its claims


def _verified(recorded_rows: RunRows, recorded_facts: HistoryFacts) -> tuple[RunRows, HistoryFacts]:
    """The demo run with a verdict row per claim of its report (each supported by the first
    sentence of its first quote, 100 + 10 tokens), the report saying so, its Markdown rendered
    again and the verifier's tokens counted, in the rows and in the history's result."""
    rows, facts = recorded_rows.model_copy(deep=True), recorded_facts.model_copy(deep=True)
    assert rows.report is not None and facts.result is not None
    report = rows.report.report
    submitted = Report(
        answer=report.answer, findings=report.findings, limitations=report.limitations
    )
    step = max(s.step for s in rows.steps if s.tool == "finish_research")
    verdicts = []
    for claim in verification.claims(submitted, AuditData(rows).evidence_models(), rows.run.brief):
        sentence = claim.quotes[0].text.split(". ")[0]
        usage = Usage(input_tokens=100, output_tokens=10)
        verdict = verification.settle(claim, "supported", sentence, "it says so", usage=usage)
        verdicts.append(verdict)
        rows.verdicts.append(
            VerdictRow(
                step=step,
                claim_no=claim.number,
                claim=claim.text,
                verdict=verdict.verdict,
                said=verdict.said,
                sentence=verdict.sentence,
                evidence_id=verdict.evidence_id,
                reason=verdict.reason,
                provider="openai",
                input_tokens=100,
                output_tokens=10,
                recorded_at=rows.report.saved_at,
            )
        )
    assert all(verdict.verdict == "supported" for verdict in verdicts)
    rows.report.verification = Verification(mode="model", verifier="openai m", verdicts=verdicts)
    asked = VerifyInput(scope=RunScope(run_id=rows.run.run_id, step=step))
    answered = VerifyResult(verdicts=verdicts)
    facts.activities.append(
        ActivityFact(
            type=VERIFY,
            input=asked.model_dump(mode="json"),
            result=answered.model_dump(mode="json"),
            completed=True,
        )
    )
    rows.run.counters.tokens += 110 * len(verdicts)
    facts.result.counters.tokens = rows.run.counters.tokens
    rows.report.markdown = render_markdown(
        report,
        list(AuditData(rows).evidence_models().values()),
        list(AuditData(rows).source_refs().values()),
        rows.report.status,
        StopReason(rows.report.stop_reason),
        question=rows.run.question,
        verification=rows.report.verification,
    )
    return rows, facts


def recorded(name: str) -> tuple[RunRows, HistoryFacts]:
    """A fresh copy of a recorded run: each test tampers with its own."""
    rows, facts = _recorded(name)
    return rows.model_copy(deep=True), facts.model_copy(deep=True)


def failed(rows: RunRows, facts: HistoryFacts | None) -> dict[str, list[str]]:
    return {
        result.check.name: result.problems
        for result in run_checks(AuditData(rows, facts))
        if result.failed
    }


@pytest.mark.parametrize("name", ["demo", "step-limit", VERIFIED])
def test_a_recorded_run_passes_every_check(name: str) -> None:
    rows, facts = recorded(name)

    results = run_checks(AuditData(rows, facts))

    assert failed(rows, facts) == {}
    assert not any(result.skipped for result in results)
    assert (
        audit_table(results)[-1] == f"{len(CHECKS)} checks: {len(CHECKS)} ok, 0 failed, 0 skipped"
    )


def test_without_a_history_the_history_checks_are_skipped_not_passed() -> None:
    rows, _ = recorded("demo")

    results = run_checks(AuditData(rows, None))

    skipped = {result.check.name for result in results if result.skipped}
    assert skipped == {check.name for check in CHECKS if check.needs_history}
    assert skipped and not any(result.failed for result in results)


# ---------------------------------------------------------------- one tamper per check


def _activity(facts: HistoryFacts, name: str, index: int = 0) -> ActivityFact:
    return [fact for fact in facts.activities if fact.type == name and fact.completed][index]


def _drop_last_step_record(facts: HistoryFacts) -> None:
    last = [fact for fact in facts.activities if fact.type == contracts.RECORD_STEP][-1]
    facts.activities.remove(last)


def _other_passage(rows: RunRows) -> str:
    evidence = rows.evidence[0]
    others = [p.passage_id for p in rows.passages if p.source_id == evidence.source_id]
    return next(pid for pid in others if pid != evidence.passage_id)


def _shift(rows: RunRows) -> None:
    """E001 recorded before its source was stored."""
    source = next(s for s in rows.sources if s.source_id == rows.evidence[0].source_id)
    rows.evidence[0].recorded_at = source.fetched_at - timedelta(seconds=1)


def _chained(rows: RunRows) -> RunRows:
    from tests.unit.test_audit_chain import chained  # that module imports this one

    return chained(rows)


# check name -> (recorded run, what to tamper with)
TAMPERS: dict[str, tuple[str, Tamper]] = {
    "snapshot-hashes": (
        "demo",
        lambda r, h: setattr(r.sources[0], "snapshot", r.sources[0].snapshot + " Edited."),
    ),
    "snapshot-sketches": ("demo", lambda r, h: setattr(r.sources[0], "sketch", [1, 2, 3])),
    "source-status": ("demo", lambda r, h: setattr(r.sources[0], "status", "failed")),
    "passages-in-snapshots": ("demo", lambda r, h: setattr(r.passages[1], "text", "Forged text.")),
    "passage-numbering": ("demo", lambda r, h: setattr(r.passages[1], "passage_no", 7)),
    "quotes-in-snapshots": (
        "demo",
        lambda r, h: setattr(r.evidence[0], "quote", r.evidence[0].quote.replace("5", "7")),
    ),
    "quotes-in-passages": (
        "demo",
        lambda r, h: setattr(r.evidence[0], "passage_id", _other_passage(r)),
    ),
    "evidence-from-read-sources": ("demo", lambda r, h: setattr(r.evidence[1], "source_id", "S9")),
    "evidence-questions": ("demo", lambda r, h: setattr(r.evidence[0], "question_id", "Q9")),
    "source-ids-in-order": ("demo", lambda r, h: setattr(r.sources[1], "source_id", "S3")),
    "evidence-ids-in-order": ("demo", lambda r, h: setattr(r.evidence[1], "id", "E009")),
    "counter-steps": ("demo", lambda r, h: setattr(r.run.counters, "steps", 10)),
    "counter-searches": ("demo", lambda r, h: r.searches.pop()),
    "counter-pages": ("demo", lambda r, h: setattr(r.run.counters, "page_fetches", 3)),
    "counter-model-calls": ("demo", lambda r, h: setattr(r.run.counters, "model_calls", 8)),
    "counter-tokens": ("demo", lambda r, h: setattr(r.model_calls[0], "input_tokens", 9_999)),
    "counter-finish-attempts": ("demo", lambda r, h: setattr(r.run.counters, "finish_attempts", 2)),
    "steps-numbered": ("demo", lambda r, h: r.steps.pop(3)),
    "turns-numbered": ("demo", lambda r, h: setattr(r.model_calls[1], "turn", 7)),
    "steps-follow-turns": (
        "demo",
        lambda r, h: setattr(r.model_calls[0].tool_calls[0], "name", "read_page"),
    ),
    "step-outcomes": ("demo", lambda r, h: setattr(r.steps[0], "error", "forged")),
    "step-entries": ("demo", lambda r, h: setattr(r.steps[0].entry, "step", 5)),
    "searches-are-search-steps": ("demo", lambda r, h: setattr(r.searches[0], "step", 2)),
    "search-results-ranked": ("demo", lambda r, h: setattr(r.searches[0].results[1], "rank", 5)),
    "search-results-allowed": (
        "demo",
        lambda r, h: setattr(r.searches[0].results[0], "url", "https://evil.example/"),
    ),
    "reads-were-offered": (
        "demo",
        lambda r, h: setattr(r.sources[0], "url", "https://docs.harborq.example/unlisted.html"),
    ),
    "reads-on-allowed-hosts": (
        "demo",
        lambda r, h: setattr(r.sources[0], "final_url", "https://evil.example/dlq"),
    ),
    "evidence-after-read": ("demo", lambda r, h: _shift(r)),
    "bound-steps": ("demo", lambda r, h: setattr(r.run.brief.limits, "max_steps", 8)),
    "bound-searches": ("demo", lambda r, h: setattr(r.run.brief.limits, "max_searches", 2)),
    "bound-pages": ("demo", lambda r, h: setattr(r.run.brief.limits, "max_page_fetches", 1)),
    "bound-finish-attempts": ("demo", lambda r, h: setattr(r.run.counters, "finish_attempts", 4)),
    "bound-tokens": ("demo", lambda r, h: setattr(r.run.brief.limits, "max_tokens", 10_000)),
    "stop-reason-holds": ("step-limit", lambda r, h: setattr(r.run, "stop_reason", "token_limit")),
    "report-saved": ("demo", lambda r, h: setattr(r, "report", None)),
    "cited-evidence-exists": (
        "demo",
        lambda r, h: r.report.report.findings[0].evidence_ids.append("E042"),
    ),
    "report-passes-gate": ("demo", lambda r, h: r.report.report.findings.pop(0)),
    "composed-flag": ("demo", lambda r, h: setattr(r.report.report, "composed", True)),
    "composed-report-recomposes": (
        "step-limit",
        lambda r, h: setattr(r.report.report, "answer", "Forged."),
    ),
    "open-questions": ("demo", lambda r, h: setattr(r.report.report, "open_questions", ["Q2"])),
    "markdown-matches-rows": (
        "demo",
        lambda r, h: setattr(r.report, "markdown", r.report.markdown.replace("30", "60")),
    ),
    "steps-chain": ("demo", lambda r, h: setattr(_chained(r).steps[2], "summary", "Forged.")),
    "evidence-chain": ("demo", lambda r, h: setattr(_chained(r).evidence[0], "claim", "Forged.")),
    "history-identity": ("demo", lambda r, h: setattr(h, "workflow_id", "research-another")),
    "history-brief": ("demo", lambda r, h: h.brief.update(question="Another question?")),
    "history-outcome": (
        "step-limit",
        lambda r, h: setattr(h.result, "stop_reason", StopReason.DEADLINE),
    ),
    "history-counters": ("demo", lambda r, h: setattr(h.result.counters, "searches", 4)),
    "history-steps": ("demo", lambda r, h: _drop_last_step_record(h)),
    "history-turns": (
        "demo",
        lambda r, h: _activity(h, contracts.DECIDE, 2).result["usage"].update(input_tokens=1),
    ),
    "history-searches": (
        "demo",
        lambda r, h: _activity(h, SEARCH_WEB).result["hits"].pop(),
    ),
    "history-sources": (
        "demo",
        lambda r, h: _activity(h, READ_PAGE).result["source"].update(content_hash="0"),
    ),
    "history-evidence": (
        "demo",
        lambda r, h: _activity(h, RECORD_EVIDENCE).result["evidence"].update(quote="Forged."),
    ),
    "history-report": ("demo", lambda r, h: setattr(h.result.report, "limitations", "Forged.")),
    # A verdict kept as supported whose sentence no cited quote holds.
    "verdicts-copied": (
        VERIFIED,
        lambda r, h: setattr(r.verdicts[1], "sentence", "Harbor Queue deletes it at once."),
    ),
    # The history's verdict is not the ledger's.
    "history-verdicts": (
        VERIFIED,
        lambda r, h: _activity(h, VERIFY).result["verdicts"][0].update(sentence="x"),
    ),
    # A completed report whose verifier found a claim unsupported.
    "report-verdicts": (
        VERIFIED,
        lambda r, h: [
            setattr(r.verdicts[2], name, "not_supported") for name in ("verdict", "said")
        ],
    ),
}


def test_there_are_at_least_25_checks_and_each_has_a_tamper_test() -> None:
    names = [check.name for check in CHECKS]
    assert len(names) >= 25
    assert sorted(names) == sorted(TAMPERS)


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_check_fails_when_the_data_it_guards_is_tampered_with(name: str) -> None:
    run, tamper = TAMPERS[name]
    rows, facts = recorded(run)
    assert name not in failed(rows, facts)

    tamper(rows, facts)

    problems = failed(rows, facts)
    assert name in problems, f"{name} did not notice; failed instead: {sorted(problems)}"
    assert all(problem and "\n" not in problem for problem in problems[name])


def test_the_table_names_the_failed_check_and_its_problem() -> None:
    rows, facts = recorded("demo")
    rows.evidence[0].quote = "Harbor Queue never retries."

    lines = audit_table(run_checks(AuditData(rows, facts)))

    line = next(line for line in lines if line.startswith("quotes-in-snapshots "))
    assert "FAIL" in line and "E001: the quote is not S1's text at 634" in line
    # The same edit breaks its chain link, the report's Markdown and the match with history (the
    # gate still passes: the finding rests on E002 too, and E001's heading names its question).
    assert sorted(failed(rows, facts)) == [
        "evidence-chain",
        "history-evidence",
        "markdown-matches-rows",
        "quotes-in-snapshots",
    ]
    assert lines[-1] == f"{len(CHECKS)} checks: {len(CHECKS) - 4} ok, 4 failed, 0 skipped"


def test_an_export_reads_back_as_the_rows_it_was_written_from(tmp_path: Path) -> None:
    rows, _ = recorded("step-limit")
    history = load_export(EXPORTS / "step-limit")[1]

    write_export(rows, history, tmp_path / "again")
    again, history_again = load_export(tmp_path / "again")

    assert again == rows
    assert history_again is not None and history is not None
    assert [one.events for one in history_again] == [one.events for one in history]


def test_an_operator_finish_recomposes_with_the_reason_the_result_carries() -> None:
    from starter.audit.report import composed_report_recomposes
    from workflows.composer import compose

    rows, facts = recorded("step-limit")
    assert rows.report is not None and facts.result is not None
    data = AuditData(rows, facts)
    reason = "enough for the design review"
    again = compose(
        rows.run.brief,
        data.evidence_models(),
        data.source_refs(),
        StopReason.OPERATOR_FINISH,
        reason,
    )
    rows.report.report = again.model_copy(update={"composed": True})
    rows.report.stop_reason = StopReason.OPERATOR_FINISH
    facts.result.message = reason  # what the workflow returns since the finish carries it

    assert list(composed_report_recomposes(AuditData(rows, facts))) == []
    facts.result.message = ""
    assert list(composed_report_recomposes(AuditData(rows, facts))), "the reason is what it checks"


def test_an_export_of_a_continued_run_holds_each_execution_oldest_first(tmp_path: Path) -> None:
    rows, _ = recorded("step-limit")
    history = load_export(EXPORTS / "step-limit")[1]
    assert history is not None and len(history) == 1
    earlier = WorkflowHistory(history[0].workflow_id, history[0].events[:5])
    chain = [earlier, earlier, history[0]]

    files = write_export(rows, chain, tmp_path / "continued")
    again = load_export(tmp_path / "continued")[1]

    assert [f for f in files if f.startswith("history")] == [
        "history-1.json", "history-2.json", "history.json"
    ]  # fmt: skip
    assert again is not None and [len(h.events) for h in again] == [5, 5, len(history[0].events)]
    facts = history_facts(again)
    assert facts.executions == 3 and facts.events == 10 + len(history[0].events)
    assert facts.brief == history_facts(history).brief  # the first execution's input


def test_the_steps_recorded_are_read_from_each_activity_that_records_them() -> None:
    """A build that records every step alone (`record_step`), and one whose decide (its input
    when regular, its summary's lines when local) and report save record the steps before."""
    run_id = "research-steps"

    def record(step: int, tool: str) -> dict[str, Any]:
        scope = RunScope.record_of(run_id, "", step, step, "")
        return contracts.StepRecord(scope=scope, tool=tool, arguments="{}", ok=True).model_dump(
            mode="json"
        )

    facts = HistoryFacts(workflow_id=run_id)
    facts.activities = [
        ActivityFact(type=contracts.RECORD_STEP, summary="step 1: search_web", local=True),
        ActivityFact(
            type=contracts.DECIDE,
            summary="decide: turn 3\nstep 2: read_page",
            input={"records": [record(2, "read_page")]},
        ),
        ActivityFact(
            type=contracts.DECIDE,
            summary="decide: turn 4\nstep 3: read_page\nstep 4: record_evidence",
            local=True,
        ),
        ActivityFact(type=contracts.DECIDE, summary="decide: turn 5", local=True),
        ActivityFact(type=contracts.DECIDE, summary="decide: turn 6\nstep 5: x", local=True),
        ActivityFact(
            type=contracts.SAVE_REPORT,
            summary="save report: completed\nstep 6: finish_research",
            local=True,
        ),
    ]
    for fact in facts.activities:
        fact.completed = fact.summary != "decide: turn 6\nstep 5: x"  # failed: recorded nothing
    # a decide abandoned at the deadline that completed all the same, and the flush after it
    facts.activities[3:3] = [
        ActivityFact(
            type=contracts.DECIDE,
            summary="decide: turn 5\n" + contracts.step_line(7, "x\ny"),  # as the workflow writes
            local=True,
        ),
        ActivityFact(type=contracts.RECORD_STEP, summary="step 7: x\ny", local=True),  # as before
    ]
    for fact in facts.activities[3:5]:
        fact.completed = True

    assert facts.recorded_steps() == [
        (1, "search_web"),
        (2, "read_page"),
        (3, "read_page"),
        (4, "record_evidence"),
        (7, "x\\ny"),  # a model's tool name, on one line
        (6, "finish_research"),
    ]
    twice = HistoryFacts(workflow_id=run_id, activities=facts.activities[1:2] * 2)
    assert twice.recorded_steps() == [(2, "read_page")] * 2, "two decides: both count"

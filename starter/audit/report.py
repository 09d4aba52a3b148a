"""Audit checks on the saved report: it exists, cites what is recorded, passes the gate it passed,
and says what the rows say (a composed report is composed again; the Markdown rendered again)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import get_args

from activities.markdown import HeaderStyle, QuoteStyle, render_markdown
from starter.audit.base import AuditData, check
from workflows import gate
from workflows.composer import compose, unaccepted
from workflows.models import RunStatus, StopReason

_STOP_REASONS = {reason.value for reason in StopReason}


@check("report-saved", "an ended run has one report with the run's status and stop reason")
def report_saved(data: AuditData) -> Iterator[str]:
    run, saved = data.rows.run, data.rows.report
    if run.status == RunStatus.RUNNING:
        if saved is not None or run.finished_at is not None:
            yield "the run is marked running but has a report or an end time"
        return
    if saved is None:
        yield f"the run ended {run.status.value} but no report is saved"
        return
    if (saved.status, saved.stop_reason) != (run.status, run.stop_reason):
        said, kept = f"{saved.status.value}/{saved.stop_reason}", f"{run.status}/{run.stop_reason}"
        yield f"the report says {said}, the run row {kept}"
    if run.stop_reason not in _STOP_REASONS:
        yield f"unknown stop reason {run.stop_reason!r}"
    if run.finished_at is None or run.finished_at < run.started_at:
        yield f"the run ended at {run.finished_at}, started at {run.started_at}"


@check("cited-evidence-exists", "every evidence ID a finding cites is recorded for this run")
def cited_evidence_exists(data: AuditData) -> Iterator[str]:
    if data.rows.report is None:
        return
    recorded = {evidence.id for evidence in data.rows.evidence}
    for number, finding in enumerate(data.rows.report.report.findings, start=1):
        for evidence_id in finding.evidence_ids:
            if evidence_id not in recorded:
                yield f"finding {number} cites {evidence_id}, which this run did not record"


@check("report-passes-gate", "a completed run's report passes the gate on the ledger's rows")
def report_passes_gate(data: AuditData) -> Iterator[str]:
    saved = data.rows.report
    if saved is None or saved.status != RunStatus.COMPLETED:
        return
    report = saved.report
    brief = data.rows.run.brief
    sources = {  # the dates and versions the limitations may name: here, of the whole page
        source_id: source.model_copy(
            update={
                "names": gate.page_names(
                    [source.title, *(p.text for p in data.passages_of(source_id))], []
                )
            }
        )
        for source_id, source in data.source_refs().items()
    }
    verified = saved.verification.mode == "model"  # figures it judged were left to it
    verdict = gate.check(
        report,
        data.evidence_models(),
        sources,
        brief,
        composed=report.composed,
        verifier=verified,
    )
    for gap in verdict.gaps:
        yield f"gate gap: {gap}"


@check("composed-flag", "the report is the model's exactly when the gate passed it")
def composed_flag(data: AuditData) -> Iterator[str]:
    saved = data.rows.report
    if saved is None:
        return
    by_model = saved.stop_reason == StopReason.COVERAGE_GATE_PASSED
    if saved.report.composed == by_model:
        yield f"composed is {saved.report.composed} for stop reason {saved.stop_reason}"


@check("composed-report-recomposes", "a composed report is what the composer makes of the rows")
def composed_report_recomposes(data: AuditData) -> Iterator[str]:
    saved = data.rows.report
    if saved is None or not saved.report.composed or saved.stop_reason not in _STOP_REASONS:
        return
    result = data.history.result if data.history else None
    fields = ["answer", "findings", "notes", "open_questions"]
    fields += ["limitations"] if result else []
    evidence = data.evidence_models()
    known = [evidence]  # after a loose end the last quote may be one the workflow never saw
    if data.loose_last_turn and evidence:
        known.append(dict(list(evidence.items())[:-1]))
    best: list[str] = []
    for held in known:
        again = compose(
            data.rows.run.brief,
            held,
            data.source_refs(),
            StopReason(saved.stop_reason),
            result.message if result else "",
        )
        # An unaccepted report holds the model's notes and its last submission (since migration
        # 022; an older one kept the evidence claims as findings).
        if saved.status != RunStatus.COMPLETED and not saved.report.findings:
            again = unaccepted(again, held, saved.report.submitted)
        best = [name for name in fields if getattr(again, name) != getattr(saved.report, name)]
        if not best:
            return
    for name in best:
        yield f"its {name} differs from what the recorded evidence composes"


@check("open-questions", "the report's open questions are those without evidence")
def open_questions(data: AuditData) -> Iterator[str]:
    saved = data.rows.report
    if saved is None:
        return
    expected = gate.open_questions(data.rows.run.brief, data.evidence_models())
    if saved.report.open_questions != expected:
        listed = ", ".join(saved.report.open_questions) or "none"
        yield f"the report lists {listed}; the evidence leaves {', '.join(expected) or 'none'}"


@check("markdown-matches-rows", "the saved Markdown renders from the report and evidence rows")
def markdown_matches_rows(data: AuditData) -> Iterator[str]:
    saved = data.rows.report
    if saved is None or saved.stop_reason not in _STOP_REASONS:
        return
    # A report saved before quotes were copied exactly has them escaped, and one saved before its
    # header said when meaning was not checked has the earlier header: any such form is the rows'.
    rendered = [
        render_markdown(
            saved.report,
            list(data.evidence_models().values()),
            list(data.source_refs().values()),
            saved.status,
            StopReason(saved.stop_reason),
            question=data.rows.run.question,
            verification=saved.verification,
            quotes=quotes,
            header=header,
            lanes=(data.rows.run.lanes, data.rows.run.escalation),
        )
        for header in get_args(HeaderStyle)
        for quotes in get_args(QuoteStyle)
    ]
    if saved.markdown not in rendered:
        line = _first_difference(rendered[0], saved.markdown)
        yield f"the saved Markdown differs from the rows at line {line}"


def _first_difference(expected: str, saved: str) -> int:
    ours, theirs = expected.splitlines(), saved.splitlines()
    pairs = enumerate(zip(ours, theirs, strict=False), start=1)
    return next((n for n, (a, b) in pairs if a != b), 1 + min(len(ours), len(theirs)))

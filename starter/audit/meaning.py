"""Audit checks on the independent check of meaning (migration 015): each verdict row is the
host's reading of what the verifier said, and a completed report shows the verdicts it passed."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import ValidationError

from activities.ledger.review import VerdictRow
from starter.audit.base import AuditData, check
from workflows import verification
from workflows.models import Report, RunStatus
from workflows.tools import FinishArgs
from workflows.verification import VERIFY, Claim, Verdict, VerifyInput, VerifyResult


@check("verdicts-copied", "a supported verdict's sentence is copied from a quote its claim cites")
def verdicts_copied(data: AuditData) -> Iterator[str]:
    for row in data.rows.verdicts:
        claim = _claim(data, row)
        if claim is None:
            yield f"step {row.step} claim {row.claim_no}: no submitted claim of that number"
            continue
        # The concerns' answers are not kept: a supported claim the host kept as not_supported
        # for a concern says so in its reason.
        settled = verification.settle(
            claim.model_copy(update={"concerns": []}), row.said, row.sentence, row.reason
        )
        concern = row.reason.startswith(
            (verification.UNANSWERED_CONCERN, verification.CONCERN_HOLDS)
        )
        if concern and settled.verdict == "supported":
            settled.verdict = "not_supported"
        if claim.text != row.claim:
            yield f"step {row.step} claim {row.claim_no}: the row's claim is not the one submitted"
        if (settled.verdict, settled.evidence_id) != (row.verdict, row.evidence_id):
            yield (
                f"step {row.step} claim {row.claim_no}: kept as {row.verdict} from "
                f"{row.evidence_id or 'no quote'}, but the quotes make it {settled.verdict}"
            )


@check("report-verdicts", "a completed report shows its last submission's verdicts, none failing")
def report_verdicts(data: AuditData) -> Iterator[str]:
    saved = data.rows.report
    if saved is None or saved.status != RunStatus.COMPLETED:
        return
    checked = saved.verification
    composed = saved.report.composed  # an operator's finish: verified after the last step
    last = _report_step(data)
    rows = [row.as_verdict() for row in data.rows.verdicts if row.step == last]
    if checked.mode != "model":
        if rows and not composed:
            yield (
                f"the report says meaning was checked {checked.mode or 'not at all'}, yet "
                f"{len(rows)} verdicts are recorded for step {last}"
            )
        return
    expected = len(_claims(data, saved.report, composed))
    if len(rows) != expected:
        yield f"{len(rows)} verdicts are recorded for step {last}, the report has {expected} claims"
    shown = [(v.number, v.verdict, v.sentence) for v in checked.verdicts]
    if shown != [(v.number, v.verdict, v.sentence) for v in rows]:
        yield f"the report's verdicts are not the ones recorded for step {last}"
    for verdict in rows:
        if verdict.blocking:
            yield f"claim {verdict.number} is {verdict.verdict}, yet the run completed"


def _report_step(data: AuditData) -> int:
    """The step the report's verdicts are keyed by: its finish step, or for a composed report
    the step after the last."""
    if data.rows.report is not None and data.rows.report.report.composed:
        return data.rows.run.counters.steps + 1
    return max((s.step for s in data.rows.steps if s.tool == "finish_research"), default=0)


def _claim(data: AuditData, row: VerdictRow) -> Claim | None:
    """The claim as the verifier was shown it: from the finish step's recorded arguments, or for
    the report's own step (its row may be missing after a loose end) from the report."""
    step = next((s for s in data.rows.steps if s.step == row.step), None)
    args = step.entry.args if step is not None and step.entry is not None else None
    report = _as_report(args) if isinstance(args, FinishArgs) else None
    if report is None and data.rows.report is not None and step is None:
        report = data.rows.report.report
    if report is None:
        return None
    composed = step is None and data.rows.report is not None and data.rows.report.report.composed
    claims = _claims(data, report, composed)
    return next((claim for claim in claims if claim.number == row.claim_no), None)


def _as_report(args: FinishArgs) -> Report:
    """A submission as the verifier reads it: its answer, findings and limitations."""
    return Report(answer=args.answer, findings=args.findings, limitations=args.limitations)


def _claims(data: AuditData, report: Report, composed: bool) -> list[Claim]:
    """The claims the verifier was asked about (a composed report: no answer or limitations of
    the model's)."""
    return verification.claims(
        report, data.evidence_models(), data.rows.run.brief, composed=composed
    )


@check(
    "history-verdicts",
    "each verdict the workflow received from the verifier is the ledger's row",
    needs_history=True,
)
def history_verdicts(data: AuditData) -> Iterator[str]:
    assert data.history is not None
    for fact in data.history.of_type(VERIFY):
        if not fact.completed:
            continue
        try:
            asked = VerifyInput.model_validate(fact.input)
            answered = VerifyResult.model_validate(fact.result)
        except ValidationError:
            yield "a verify activity's input or result is not the verifier's contract"
            continue
        step = asked.scope.step
        kept = [row.as_verdict() for row in data.rows.verdicts if row.step == step]
        if [_shown(v) for v in answered.verdicts] != [_shown(v) for v in kept]:
            yield f"the verdicts the workflow received at step {step} are not the ledger's"


def _shown(verdict: Verdict) -> tuple[int, str, str, str, str]:
    return (verdict.number, verdict.claim, verdict.verdict, verdict.said, verdict.sentence)

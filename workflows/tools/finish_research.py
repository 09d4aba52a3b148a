"""`finish_research`: submit the report; the coverage gate passes it (the run ends) or says why."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workflows import gate, verification
from workflows.ending import Outcome
from workflows.models import Finding, Report, RunStatus, StopReason, Submitted
from workflows.tool_base import ToolArgs, ToolData
from workflows.tools.spec import Executed, ToolContext, ToolSpec
from workflows.verification import Verification

NAME = "finish_research"


class FinishArgs(ToolArgs):
    answer: str = Field(min_length=1)
    findings: list[Finding] = Field(default_factory=list)
    limitations: str = ""


class GateFailed(ToolData):
    """Refused: every gap, what is left, and where to look next."""

    kind: Literal["gate_failed"] = "gate_failed"
    gaps: list[str]
    finish_attempts_left: int
    unread_urls: list[str] = Field(default_factory=list)

    def error_detail(self) -> str | None:
        return "; ".join(self.gaps)


class GatePassed(ToolData):
    kind: Literal["gate_passed"] = "gate_passed"
    passed: Literal[True]


async def run(args: FinishArgs, tool: ToolContext) -> Executed:
    state = tool.state
    left = state.take_finish_attempt()
    verified = tool.verifier == "model"  # the judgement rules' doubts become its questions
    submitted = Report(answer=args.answer, findings=args.findings, limitations=args.limitations)
    verdict = gate.check(submitted, state.evidence, state.sources, state.brief, verifier=verified)
    gaps = verdict.gaps
    checked = Verification(mode=tool.verifier, verifier=tool.verifier_name)
    if verdict.passed and verified:  # the proof rules passed: now the meaning
        checked.verdicts = await verify_claims(submitted, tool, verdict)
        gaps = verification.gaps(checked.verdicts)
    if not gaps:
        report = Report(
            answer=args.answer,
            findings=args.findings,
            limitations=args.limitations,
            open_questions=gate.open_questions(state.brief, state.evidence),
        )
        outcome = Outcome(
            status=RunStatus.COMPLETED,
            stop_reason=StopReason.COVERAGE_GATE_PASSED,
            report=report,
            verification=checked,
        )
        return Executed(GatePassed(passed=True), outcome=outcome)
    state.submitted = Submitted(
        answer=args.answer, findings=args.findings, limitations=args.limitations, gaps=gaps
    )
    refused = GateFailed(gaps=gaps, finish_attempts_left=left, unread_urls=state.unread_urls()[:10])
    ended = None
    if left <= 0:
        ended = Outcome(
            status=RunStatus.INCOMPLETE,
            detail="; ".join(gaps),
            stop_reason=StopReason.FINISH_ATTEMPTS_EXHAUSTED,
        )
    return Executed(refused, ok=False, error="the coverage gate failed", outcome=ended)


async def operator_finish(report: Report, tool: ToolContext) -> Outcome:
    """An operator's finish_now: the report composed from the evidence passes the same gate (and
    the verifier) a submission does, and completes the run, or the run ends incomplete with it.
    The operator's reason is the outcome's message: what the report was composed with."""
    state = tool.state
    verified = tool.verifier == "model"
    verdict = gate.check(
        report, state.evidence, state.sources, state.brief, composed=True, verifier=verified
    )
    checked = Verification()  # a composed report is labelled as such; a verifier may read it
    passed = verdict.passed
    if passed and verified:  # a completed report's findings are checked for meaning too
        checked = Verification(mode="model", verifier=tool.verifier_name)
        checked.verdicts = await verify_claims(report, tool, verdict, composed=True)
        passed = not verification.gaps(checked.verdicts)
    return Outcome(
        status=RunStatus.COMPLETED if passed else RunStatus.INCOMPLETE,
        stop_reason=StopReason.OPERATOR_FINISH,
        report=report,
        verification=checked,
        detail=state.finish_reason,
    )


async def verify_claims(
    report: Report,
    tool: ToolContext,
    checked: gate.GateResult,
    *,
    composed: bool = False,
) -> list[verification.Verdict]:
    """Ask the verifier about every claim, with the concerns the gate `checked` raised; its
    tokens count against the run's budget. A `composed` report (an operator's finish) has no
    answer or limitations of the model's to check, and no step of its own: its verdicts are
    keyed by the step after the last one."""
    state = tool.state
    claims = verification.claims(
        report, state.evidence, state.brief, state.sources, checked.concerns_of, composed=composed
    )
    scope = tool.scope()
    if composed:
        done = state.counters.steps
        fork = scope.fork.model_copy(update={"steps": done, "work": done})
        scope = scope.model_copy(update={"step": done + 1, "fork": fork})
    answered = await tool.activity(
        verification.VERIFY_ACTIVITY,
        verification.VerifyInput(scope=scope, claims=claims, rerun_of=state.brief.rerun_of),
        summary=f"verify: {len(claims)} claims of step {scope.step}",
    )
    tool.verified(answered)
    return answered.verdicts


def describe(args: FinishArgs, data: ToolData) -> str:
    """Only a passed gate is an ok result (a refusal is described by its error)."""
    return "finish: the coverage gate passed"


SPEC = ToolSpec(
    name=NAME,
    description=(
        "Submit answer, findings citing evidence ids (E001) and limitations. If coverage fails "
        "you get the gaps and may go on."
    ),
    arguments=FinishArgs,
    parameters={
        "answer": "The answer to the question.",
        "findings": "Findings, each citing evidence ids.",
        "limitations": "What stays open or uncertain.",
    },
    verbatim=frozenset(),
    results=(GateFailed, GatePassed),
    runs=None,
    run=run,
    describe=describe,
    compact=None,
    slimming=None,
    untrusted=None,
    rests_on=None,
    label=NAME,
)

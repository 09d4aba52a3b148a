"""`finish_research`: submit the report; the coverage gate passes it (the run ends) or says why."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from workflows import gate
from workflows.models import Finding, Report, RunStatus, StopReason
from workflows.tool_base import ToolArgs, ToolData
from workflows.tools.spec import Executed, Outcome, ToolContext, ToolSpec

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
    verdict = gate.check(args, state.evidence, state.sources, state.brief)
    if verdict.passed:
        report = Report(
            answer=args.answer,
            findings=args.findings,
            limitations=args.limitations,
            open_questions=gate.open_questions(state.brief, state.evidence),
        )
        outcome = Outcome(
            status=RunStatus.COMPLETED, stop_reason=StopReason.COVERAGE_GATE_PASSED, report=report
        )
        return Executed(tool.result(data=GatePassed(passed=True)), outcome)
    result = tool.result(
        ok=False,
        error="the coverage gate failed",
        data=GateFailed(
            gaps=verdict.gaps, finish_attempts_left=left, unread_urls=state.unread_urls()[:10]
        ),
    )
    if left <= 0:
        return Executed(
            result,
            Outcome(
                status=RunStatus.INCOMPLETE,
                detail="; ".join(verdict.gaps),
                stop_reason=StopReason.FINISH_ATTEMPTS_EXHAUSTED,
            ),
        )
    return Executed(result)


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
    label=NAME,
)

"""The fixed lane (deterministic): retrieve per sub-question, one composing model call, then the
host records the cited passages and submits the report; on a signal the run escalates to the
agent loop with everything read and recorded already in its transcript (DESIGN.md, Lanes).

Every step the lane takes is a tool call the host makes through the same dispatcher as the
model's (`workflows.dispatch`): the same checks, activities, ledger rows, step budget and step
lines, so the agent that takes over sees them as its own transcript, no page is fetched twice and
evidence ids continue. The lane never comes back once the run escalated.

An operator's escalate (the `escalate` signal, or the `escalate_run` update that answers) is
acted on before the lane's next step; `escalation_refused` says, in one sentence, why a run
cannot act on one: the update refuses with it, the signal logs it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from datetime import datetime
from typing import Any, Protocol

from temporalio import workflow

from workflows import outcomes
from workflows.contracts import StartRunResult
from workflows.dispatch import Handled
from workflows.ending import Outcome
from workflows.models import (
    Brief,
    Decision,
    EscalateResult,
    Finding,
    Question,
    RunStatus,
    StopReason,
    ToolCall,
)
from workflows.state import RunState
from workflows.tool_base import InvalidCall
from workflows.tools import (
    FINISH_RESEARCH,
    READ_PAGE,
    RECORD_EVIDENCE,
    SEARCH_WEB,
    EvidenceData,
    PageWindow,
    SearchData,
    compose_report,
)
from workflows.tools.compose_report import ComposeArgs

FIXED = "fixed"
AGENT = "agent"
AUTO = "auto"
COMPOSE = compose_report.NAME
HOST_CALL = "fixed_"  # the call id of each step the lane makes: `fixed_7` (the audit reads it)
READS_PER_QUESTION = 2  # the best allowed results read for each sub-question
OPERATOR = "an operator asked for deeper work"
ESCALATION_REFUSED = "EscalationRefused"  # the error type of a refused escalate_run update
ESCALATES = "the run continues as the agent before its next step"
NOT_STARTED = "the run has not started yet, so its lane is not known: send escalate again"


class LaneHost(Protocol):
    """What the lane may use of the workflow: its state, a host-made step, the composing call,
    a refused step for a malformed reply, and how a bound ends the run."""

    @property
    def state(self) -> RunState: ...

    def step(self, call: ToolCall) -> Awaitable[Handled]: ...

    def compose(self) -> Awaitable[Decision | Outcome]: ...

    def refuse(self, decision: Decision, problem: str) -> None: ...

    def stopped(self, stop: StopReason) -> Awaitable[Outcome]: ...


class Escalation(Exception):
    """The fixed lane hands the run to the agent, for this reason."""


def escalation_refused(
    state: RunState, started: StartRunResult | None, ended: bool, now: datetime
) -> str:
    """Why an operator's escalate cannot be acted on now, in one sentence ("": it will be, before
    the fixed lane's next step). `started`: what start_run said (None: it has not answered yet);
    `ended`: the run has its outcome."""
    if ended:
        return "the run has already ended"
    if started is None:
        return NOT_STARTED
    refused = _lane_refused(state.brief, started.lane)
    if refused:
        return refused
    if AGENT in state.lanes:
        return f"the run already escalated to the agent ({state.escalation})"
    if state.escalation_asked:
        return f"an escalate was already asked ({state.escalation_asked}) and {ESCALATES}"
    stop = state.tripped(now)
    if stop is not None:  # the lane's next check ends the run
        return f"the run is ending ({stop.value}) before its next step"
    if state.fixed_submitted:
        return (
            "the fixed lane has already submitted its report, its last step: if the report is "
            "refused, the run continues as the agent on its own"
        )
    return ""


def _lane_refused(brief: Brief, lane: str) -> str:
    """Why a run that started in `lane` can never escalate ("": it can, starting `auto`)."""
    if lane == FIXED:
        why = 'its brief says "lane": "fixed"' if brief.lane == FIXED else "as the run it reruns"
        return f"the run keeps to the fixed lane alone ({why}), which never hands over to the agent"
    if lane == AUTO:
        return ""
    why = "RESEARCH_LANE=agent, the offline policy, or a run from before lanes"
    why = "a rerun of an agent's turns" if brief.rerun_of else why
    why = 'its brief says "lane": "agent"' if brief.lane == AGENT else why
    return f"the run is in the agent lane from its start ({why}), so it has no fixed lane to leave"


def escalate(state: RunState, reason: str) -> EscalateResult:
    """An operator's escalate the run will act on (`escalation_refused` said nothing)."""
    state.ask_escalation(reason)
    return EscalateResult(reason=state.escalation_asked, message=ESCALATES)


def escalate_signal(state: RunState, reason: str, refused: str) -> None:
    """The `escalate` signal: taken as the update takes it, or logged as ignored (a signal cannot
    answer). Sent before start_run said the lane, it is taken, and a lane that cannot act on it
    logs it when it begins."""
    if refused and refused != NOT_STARTED:
        workflow.logger.warning("escalate ignored: %s", refused)
    else:
        state.ask_escalation(reason)


def enter_agent(state: RunState) -> None:
    """The agent loop begins: after the fixed lane, or from the start."""
    if not state.lanes:
        _ignore_early(state, AGENT)
    state.enter_lane(AGENT)


def _ignore_early(state: RunState, lane: str) -> None:
    """An escalate sent before start_run said the lane, met by a lane that cannot act on it."""
    if state.escalation_asked:
        workflow.logger.warning("escalate ignored: %s", _lane_refused(state.brief, lane))


def starts_fixed(started: StartRunResult, state: RunState) -> bool:
    """Whether the run starts in the fixed lane now: start_run said so (a run recorded before
    lanes says nothing: the agent) and no lane has been entered yet."""
    return started.lane in (AUTO, FIXED) and not state.lanes


async def fixed_lane(host: LaneHost, *, escalates: bool) -> Outcome | None:
    """Run the fixed lane: its outcome, or None when it escalated (the reason is in the state).
    Not `escalates` (the brief's `"lane": "fixed"`): it submits what it composed and ends."""
    state = host.state
    state.enter_lane(FIXED)
    if not escalates:
        _ignore_early(state, FIXED)
    try:
        return await _run(host, escalates)
    except _Ended as ended:
        return ended.outcome
    except Escalation as reason:  # raised only when it `escalates`
        state.enter_lane(AGENT, str(reason))
        return None


async def _run(host: LaneHost, escalates: bool) -> Outcome:
    state = host.state
    for url in list(state.seeds):  # the brief's seed URLs first: the brief chose them
        await _step(host, escalates, READ_PAGE, url=url)
    for question in state.brief.questions:
        if question.depends_on and escalates:
            needs = ", ".join(question.depends_on)
            raise Escalation(f"{question.id} depends on the answer to {needs}")
        await _retrieve(host, escalates, question)
    if not any(_windows(state)):
        _escalate(escalates, "no page could be read for any sub-question")
    decision = await _ask(host, escalates)
    try:
        args = compose_report.parse(decision.tool_calls)
    except InvalidCall as problem:
        host.refuse(decision, str(problem))
        _escalate(escalates, f"the composing reply was refused: {problem}")
        args = ComposeArgs(answer=decision.text or "(no report)")
    findings, conflicts = await _record(host, escalates, args)
    if conflicts:
        _escalate(escalates, f"the host found a conflict: {conflicts[0]}")
    uncovered = [
        question.id
        for question in state.brief.questions
        if question.required and not any(e.question_id == question.id for e in _evidence(state))
    ]
    if uncovered:
        _escalate(escalates, f"required {', '.join(uncovered)} has no evidence")
    report = {"answer": args.answer, "findings": findings, "limitations": args.limitations}
    state.fixed_submitted = True  # its `_check` is the lane's last: an escalate after is refused
    handled = await _step(host, escalates, FINISH_RESEARCH, **report)
    if handled.outcome is not None and handled.outcome.status is RunStatus.COMPLETED:
        return handled.outcome
    _escalate(escalates, f"the report was refused: {handled.result.error or 'not accepted'}")
    # The fixed lane alone submits once: its refused report is where it ends.
    detail = handled.result.error or "the report was not accepted"
    if handled.outcome is not None:
        return handled.outcome
    return outcomes.stopped(StopReason.FINISH_ATTEMPTS_EXHAUSTED, f"fixed lane: {detail}")


async def _retrieve(host: LaneHost, escalates: bool, question: Question) -> None:
    """Search the sub-question, then read its best results not read yet (no page twice)."""
    state = host.state
    if state.counters.searches >= state.limits.max_searches:
        return
    searched = await _step(host, escalates, SEARCH_WEB, query=question.text)
    data = searched.result.data
    hits = [item.url for item in data.results] if isinstance(data, SearchData) else []
    read = 0
    for url in hits:
        if read >= READS_PER_QUESTION:
            return
        if url in state.url_index:  # read for an earlier sub-question: its passages are shown
            continue
        if state.counters.page_fetches >= state.limits.max_page_fetches:
            return
        handled = await _step(host, escalates, READ_PAGE, url=url)
        read += 1 if handled.result.ok else 0


async def _ask(host: LaneHost, escalates: bool) -> Decision:
    """The one composing call (its bounds checked first, as before any model turn)."""
    await _check(host, escalates)
    asked = await host.compose()
    if isinstance(asked, Outcome):
        raise _Ended(asked)
    return asked


async def _record(
    host: LaneHost, escalates: bool, args: ComposeArgs
) -> tuple[list[dict[str, Any]], list[str]]:
    """Record each cited passage as evidence, once per passage and question (as the model's
    record_evidence with passage_id would): the findings citing the evidence ids, and the
    conflicts the host found."""
    recorded: dict[tuple[str, str], str] = {}
    conflicts: list[str] = []
    findings: list[dict[str, Any]] = []
    for finding in args.findings:
        for citation in finding.citations:
            key = (citation.passage_id, citation.question_id)
            if key in recorded:
                continue
            handled = await _step(
                host,
                escalates,
                RECORD_EVIDENCE,
                question_id=citation.question_id,
                source_id=citation.source_id,
                claim=citation.claim,
                stance=citation.stance,
                passage_id=citation.passage_id,
            )
            if handled.result.ok and isinstance(handled.result.data, EvidenceData):
                recorded[key] = handled.result.data.evidence_id
                conflicts += handled.result.data.conflicts
        cited = [(c.passage_id, c.question_id) for c in finding.citations]
        ids = list(dict.fromkeys(recorded[key] for key in cited if key in recorded))
        findings.append(Finding(text=finding.text, evidence_ids=ids).model_dump())
    return findings, conflicts


async def _step(host: LaneHost, escalates: bool, tool: str, **arguments: Any) -> Handled:
    """One host-made call, after the bounds and an operator's escalate are checked."""
    await _check(host, escalates)
    state = host.state
    call = ToolCall(
        id=f"{HOST_CALL}{state.counters.steps + 1}",
        name=tool,
        arguments=json.dumps(arguments, ensure_ascii=False),
    )
    handled = await host.step(call)
    if handled.outcome is not None and handled.outcome.status is not RunStatus.COMPLETED:
        raise _Ended(handled.outcome)
    return handled


async def _check(host: LaneHost, escalates: bool) -> None:
    state = host.state
    stop = state.tripped(workflow.now())
    if stop is not None:
        raise _Ended(await host.stopped(stop))
    if state.escalation_asked and escalates:
        raise Escalation(f"{OPERATOR}: {state.escalation_asked}")


def _escalate(escalates: bool, reason: str) -> None:
    if escalates:
        raise Escalation(reason)


def _windows(state: RunState) -> list[PageWindow]:
    return [
        entry.result.data
        for entry in state.transcript
        if isinstance(entry.result.data, PageWindow) and entry.result.data.passages
    ]


def _evidence(state: RunState) -> list[Any]:
    return list(state.evidence.values())


class _Ended(Exception):
    """A bound (or an operator's finish) ended the run inside the lane."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.stop_reason.value)
        self.outcome = outcome

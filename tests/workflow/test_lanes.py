"""The fixed lane and its escalation to the agent (`workflows.lanes`), on the real workflow with
stand-in activities: retrieval per sub-question, one composing call, the host's evidence records
and submission through the same dispatcher, and each signal that hands the run to the agent with
what was read and recorded (no page fetched twice, evidence ids continue)."""

from __future__ import annotations

import json
from collections.abc import Callable

from temporalio.client import Client

from tests.workflow.harness import (
    FINDING_TEXT,
    PAGE_A,
    PAGE_B,
    PAGES,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    research_worker,
)
from workflows import contracts
from workflows.models import (
    Brief,
    Decision,
    EscalateInput,
    RunResult,
    RunStatus,
    StopReason,
    ToolCall,
    Usage,
)
from workflows.research import ResearchWorkflow
from workflows.tools import compose_report

CITED = [("S1.P2", "Q1", "The default timeout is 30 seconds."), ("S2.P1", "Q2", "5 attempts.")]


def composed(*citations: tuple[str, str, str], answer: str = "answer") -> Decision:
    """A compose_report reply: one finding per citation, FINDING_TEXT each."""
    findings = [
        {"text": FINDING_TEXT, "citations": [{"passage_id": p, "question_id": q, "claim": c}]}
        for p, q, c in citations
    ]
    arguments = {"answer": answer, "findings": findings, "limitations": ""}
    return Decision(
        tool_calls=[ToolCall(id="c1", name=compose_report.NAME, arguments=json.dumps(arguments))],
        usage=Usage(input_tokens=80, output_tokens=20),
    )


def lanes_script(
    compose: Decision, agent: list[Decision] | None = None
) -> Callable[[contracts.DecideInput], Decision]:
    """The composing call answered by `compose`, the agent's turns by `agent` in order."""
    turns = list(agent or [])
    asked: set[int] = set()  # the agent's turns so far (a retried turn is the same turn)

    def script(request: contracts.DecideInput) -> Decision:
        if request.compose:
            return compose
        asked.add(request.scope.turn)
        assert turns, "the agent was asked, and no agent turn was scripted"
        return turns[min(len(asked), len(turns)) - 1]

    return script


async def run_lanes(
    client: Client,
    script: Callable[[contracts.DecideInput], Decision],
    brief: Brief | None = None,
    lane: str = "auto",
    escalate: str | None = None,
) -> tuple[RunResult, StandIns]:
    web = FakeWeb(pages=dict(PAGES))
    stand_ins = StandIns(web, script, started=contracts.StartRunResult(lane=lane))
    async with research_worker(client, stand_ins) as queue:
        signal = {}
        if escalate is not None:  # sent with the start: the lane meets it before its first step
            signal = {
                "start_signal": "escalate",
                "start_signal_args": [EscalateInput(reason=escalate)],
            }
        result: RunResult = await client.execute_workflow(
            ResearchWorkflow.run,
            brief or make_brief(),
            id=f"lanes-{id(stand_ins)}",
            task_queue=queue,
            **signal,  # type: ignore[arg-type]
        )
    return result, stand_ins


def tools_of(stand_ins: StandIns) -> list[str]:
    return [step.tool for step in stand_ins.web.steps]


async def test_a_brief_completes_in_the_fixed_lane_with_one_composing_call(client: Client) -> None:
    result, stand_ins = await run_lanes(client, lanes_script(composed(*CITED)))

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.lanes == ["fixed"] and result.escalation == ""
    calls = stand_ins.web.decide_calls
    assert [request.compose for request in calls] == [True]  # one model call, the composing one
    assert result.counters.model_calls == 1 and result.counters.tokens == 100
    assert tools_of(stand_ins) == [
        "search_web",
        "read_page",
        "search_web",
        "read_page",
        "record_evidence",
        "record_evidence",
        "finish_research",
    ]
    # The composer saw every passage read, from the ledger's steps.
    windows = [e for e in calls[0].transcript if e.call.name == "read_page"]
    assert [e.result.data.source_id for e in windows] == ["S1", "S2"]  # type: ignore[union-attr]
    assert [(q.id, q.question_id) for q in result.quotes] == [("E001", "Q1"), ("E002", "Q2")]
    assert result.report.findings[0].evidence_ids == ["E001"]


async def test_a_refused_report_escalates_and_the_agent_finishes_without_fetching_again(
    client: Client,
) -> None:
    # A third finding cites a page never read: its record is refused, the finding cites nothing
    # and the gate refuses the report.
    compose = composed(*CITED, ("S9.P1", "Q1", "Something else."))
    agent = [call("read_page", url="https://a.example/one"), finish(["E001"], ["E002"])]
    result, stand_ins = await run_lanes(client, lanes_script(compose, agent))

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.lanes == ["fixed", "agent"]
    assert result.escalation.startswith("the report was refused")
    web = stand_ins.web
    assert len(web.fetches) == len(set(web.fetches)) == 2  # the agent's read was a stored page
    assert result.counters.page_fetches == 2 and result.counters.searches == 2
    # The agent's first turn saw the fixed lane's steps as its transcript, the refusal last.
    first_agent = web.decide_calls[1]
    assert not first_agent.compose
    assert [e.call.name for e in first_agent.transcript][-2:] == [
        "record_evidence",
        "finish_research",
    ]
    assert result.counters.model_calls == 3  # compose, then two agent turns
    assert result.report.findings[1].evidence_ids == ["E002"]


async def test_a_required_question_without_evidence_escalates_before_submitting(
    client: Client,
) -> None:
    agent = [
        call(
            "record_evidence",
            question_id="Q2",
            source_id="S2",
            claim="5 attempts",
            stance="supports",
            passage_id="S2.P1",
        ),
        finish(["E001"], ["E002"]),
    ]
    result, stand_ins = await run_lanes(client, lanes_script(composed(CITED[0]), agent))

    assert result.status is RunStatus.COMPLETED
    assert result.escalation == "required Q2 has no evidence"
    assert "finish_research" not in tools_of(stand_ins)[:6]  # the lane did not submit
    assert result.counters.finish_attempts == 1  # the agent's one


async def test_depends_on_hands_the_run_to_the_agent_after_the_first_question(
    client: Client,
) -> None:
    brief = Brief.model_validate(
        {
            **make_brief().model_dump(exclude={"questions"}),
            "questions": [
                {"id": "Q1", "text": "timeout"},
                {"id": "Q2", "text": "attempts", "depends_on": ["Q1"]},
            ],
        }
    )
    agent = [call("search_web", query="attempts")]
    stop = Decision(tool_calls=[], text="")
    result, stand_ins = await run_lanes(
        client,
        lanes_script(composed(*CITED), [*agent, stop]),
        brief.model_copy(update={"limits": brief.limits.model_copy(update={"max_steps": 5})}),
    )

    assert result.escalation == "Q2 depends on the answer to Q1"
    assert tools_of(stand_ins)[:3] == ["search_web", "read_page", "search_web"]
    assert not any(request.compose for request in stand_ins.web.decide_calls)
    assert stand_ins.web.searches[:2] == ["timeout", "attempts"]


async def test_an_operator_escalate_hands_over_before_the_next_step(client: Client) -> None:
    agent = [call("search_web", query="timeout"), Decision(tool_calls=[], text="")]
    brief = make_brief(max_steps=2)
    result, stand_ins = await run_lanes(
        client, lanes_script(composed(*CITED), agent), brief, escalate="look at the changelog"
    )

    assert result.lanes == ["fixed", "agent"]
    assert result.escalation == "an operator asked for deeper work: look at the changelog"
    assert not any(request.compose for request in stand_ins.web.decide_calls)
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)


async def test_a_budget_spent_across_lanes_ends_incomplete_with_the_composed_report(
    client: Client,
) -> None:
    compose = composed(*CITED, ("S9.P1", "Q1", "Something else."))
    # 8 steps: the fixed lane's two searches, two reads, three records and its submission.
    result, stand_ins = await run_lanes(
        client, lanes_script(compose, [finish(["E001"], ["E002"])]), make_brief(max_steps=8)
    )

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.lanes == ["fixed", "agent"]
    assert result.report.composed and result.evidence_count == 2
    assert len(stand_ins.web.decide_calls) == 1  # the agent was never asked: no steps were left


async def test_the_fixed_lane_alone_ends_with_its_refused_report(client: Client) -> None:
    compose = composed(*CITED, ("S9.P1", "Q1", "Something else."))
    result, _ = await run_lanes(client, lanes_script(compose), lane="fixed")

    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
    )
    assert result.lanes == ["fixed"] and result.escalation == ""
    assert result.report.submitted is not None  # the lane's report, marked not accepted


async def test_a_malformed_composing_reply_is_a_refused_step_and_escalates(
    client: Client,
) -> None:
    junk = Decision(tool_calls=[], text="Here is my report: all good.")
    result, stand_ins = await run_lanes(
        client, lanes_script(junk, [finish(["E001"])]), make_brief(max_steps=6)
    )

    assert result.escalation.startswith("the composing reply was refused")
    assert tools_of(stand_ins)[4] == ""  # the refused step, its text kept as the call


async def test_a_conflict_the_host_finds_escalates_before_submitting(client: Client) -> None:
    # A third page on its own host states another timeout: the host flags the two figures.
    pages = {
        PAGE_A: PAGES[PAGE_A],
        "https://c.example/three": ["The default timeout of a queue message is 60 seconds."],
        PAGE_B: PAGES[PAGE_B],
    }
    web = FakeWeb(pages=pages)
    compose = composed(
        ("S1.P2", "Q1", "The default timeout is 30 seconds."),
        ("S2.P1", "Q1", "The default timeout is 60 seconds."),
        ("S3.P1", "Q2", "5 attempts."),
    )
    script = lanes_script(compose, [Decision(tool_calls=[], text="")])
    stand_ins = StandIns(web, script, started=contracts.StartRunResult(lane="auto"))
    brief = make_brief(max_steps=10).model_copy(
        update={"allowed_hosts": ["a.example", "b.example", "c.example"]}
    )
    async with research_worker(client, stand_ins) as queue:
        result: RunResult = await client.execute_workflow(
            ResearchWorkflow.run, brief, id="lanes-conflict", task_queue=queue
        )

    assert result.lanes == ["fixed", "agent"]
    assert result.escalation.startswith("the host found a conflict: ")
    assert "E001" in result.escalation and "E002" in result.escalation
    assert "finish_research" not in tools_of(stand_ins)  # the lane did not submit

"""An operator's escalate answers: the `escalate_run` update (and `research signal ID escalate`,
which sends it) says the run continues as the agent, or refuses in one sentence a run that cannot
escalate; the `escalate` signal logs what it ignores. On the real workflow with stand-ins."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from temporalio import activity
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from starter.errors import EXIT_FAILED, CliError
from starter.steer import Steered, escalate
from tests.workflow.harness import (
    PAGES,
    Checkpoint,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    research_worker,
    start,
)
from tests.workflow.test_lanes import CITED, composed, lanes_script
from tests.workflow.test_verifier import verifier_saying
from workflows import contracts
from workflows.models import (
    Brief,
    Decision,
    EscalateInput,
    EscalateResult,
    RunResult,
    RunStatus,
    StopReason,
)
from workflows.research import ResearchWorkflow
from workflows.verification import VERIFY, VerifyInput, VerifyResult

Script = Callable[[contracts.DecideInput], Decision]
COMPOSE_TURN = 1  # the fixed lane's composing call is the run's first model call
FIXED_ALONE = (
    'the run keeps to the fixed lane alone (its brief says "lane": "fixed"), which never hands '
    "over to the agent"
)
AGENT_ALONE = (
    "the run is in the agent lane from its start (RESEARCH_LANE=agent, the offline policy, or a "
    "run from before lanes), so it has no fixed lane to leave"
)
SUBMITTED = (
    "the fixed lane has already submitted its report, its last step: if the report is refused, "
    "the run continues as the agent on its own"
)


class HeldVerifier(StandIns):
    """Stand-ins whose verifier, asked when a report passed the gate, waits for the test (and
    then supports every claim)."""

    def __init__(self, script: Script) -> None:
        supports = verifier_saying(lambda claim: "supported").verifier
        started = contracts.StartRunResult(lane="auto")
        super().__init__(FakeWeb(pages=PAGES), script, started=started, verifier=supports)
        self.reached = asyncio.Event()
        self.released = asyncio.Event()

    @activity.defn(name=VERIFY)
    async def verify(self, request: VerifyInput) -> VerifyResult:
        self.reached.set()
        await self.released.wait()
        return await super().verify(request)


@asynccontextmanager
async def held(
    client: Client, stand_ins: StandIns, brief: Brief, reached: asyncio.Event
) -> AsyncIterator[WorkflowHandle[Any, RunResult]]:
    """A run held where `reached` is set, until the test releases it."""
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, brief)
        await asyncio.wait_for(reached.wait(), timeout=30)
        yield handle


def at_compose(
    script: Script, lane: str, checkpoint: Checkpoint | None = None
) -> tuple[StandIns, Checkpoint]:
    """Stand-ins starting the run in `lane`, the model held at `checkpoint` (the composing call)."""
    checkpoint = checkpoint or Checkpoint(COMPOSE_TURN)
    started = contracts.StartRunResult(lane=lane)
    stand_ins = StandIns(FakeWeb(pages=PAGES), script, checkpoint=checkpoint, started=started)
    return stand_ins, checkpoint


async def refusal(handle: WorkflowHandle[Any, RunResult]) -> str:
    """The `escalate_run` update's refusal: one non-retryable sentence of its own type."""
    with pytest.raises(WorkflowUpdateFailedError) as refused:
        await handle.execute_update(ResearchWorkflow.escalate_run, EscalateInput(reason="deeper"))
    cause = refused.value.cause
    assert isinstance(cause, ApplicationError)
    assert (cause.type, cause.non_retryable) == ("EscalationRefused", True)
    return cause.message


def ignored(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The warnings the workflow logged for an escalate it ignored."""
    return [r.getMessage() for r in caplog.records if "escalate ignored" in r.getMessage()]


async def test_escalate_is_answered_and_the_run_continues_as_the_agent(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    agent = [call("search_web", query="timeout"), Decision(tool_calls=[], text="")]
    stand_ins, checkpoint = at_compose(lanes_script(composed(*CITED), agent), "auto")

    async with held(client, stand_ins, make_brief(max_steps=6), checkpoint.reached) as handle:
        exit_code = await escalate(
            Steered(handle, "", polled=True), EscalateInput(reason="check the changelog")
        )
        again = await refusal(handle)
        checkpoint.released.set()
        result = await handle.result()

    assert exit_code == 0
    printed = capsys.readouterr()
    assert printed.out == (
        f"Sent escalate to run {handle.id}: the run continues as the agent before its next step\n"
    )
    assert again == (
        "an escalate was already asked (check the changelog) and the run continues as the agent "
        "before its next step"
    )
    assert result.lanes == ["fixed", "agent"]
    assert result.escalation == "an operator asked for deeper work: check the changelog"
    # The composing call in flight was answered and not used: no evidence was recorded from it;
    # the agent's search was the next step.
    tools = [step.tool for step in stand_ins.web.steps]
    assert tools[:5] == ["search_web", "read_page", "search_web", "read_page", "search_web"]
    assert "record_evidence" not in tools and result.evidence_count == 0


async def test_the_update_answers_with_the_reason_it_keeps(client: Client) -> None:
    stand_ins, checkpoint = at_compose(lanes_script(composed(*CITED), [finish(["E001"])]), "auto")

    async with held(client, stand_ins, make_brief(max_steps=6), checkpoint.reached) as handle:
        answer: EscalateResult = await handle.execute_update(
            ResearchWorkflow.escalate_run, EscalateInput()
        )
        checkpoint.released.set()
        result = await handle.result()

    assert answer == EscalateResult(
        reason="asked by an operator",
        message="the run continues as the agent before its next step",
    )
    assert result.escalation == "an operator asked for deeper work: asked by an operator"


async def test_a_fixed_lane_only_run_refuses_escalate_and_ends_in_the_fixed_lane(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    stand_ins, checkpoint = at_compose(lanes_script(composed(*CITED)), "fixed")
    brief = make_brief().model_copy(update={"lane": "fixed"})

    async with held(client, stand_ins, brief, checkpoint.reached) as handle:
        with pytest.raises(CliError) as refused:
            await escalate(Steered(handle, "", polled=True), EscalateInput(reason="deeper"))
        await handle.signal(ResearchWorkflow.escalate, EscalateInput(reason="deeper"))
        checkpoint.released.set()
        result = await handle.result()

    assert refused.value.exit_code == EXIT_FAILED
    assert str(refused.value) == f"run {handle.id} refused to escalate: {FIXED_ALONE}"
    assert [message.split(FIXED_ALONE)[0] for message in ignored(caplog)] == ["escalate ignored: "]
    assert (result.status, result.lanes, result.escalation) == (RunStatus.COMPLETED, ["fixed"], "")


async def test_a_run_in_the_agent_lane_from_its_start_refuses_escalate(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    script = [call("search_web", query="timeout"), Decision(tool_calls=[], text="")]
    stand_ins, checkpoint = at_compose(lambda request: script[request.scope.turn - 1], "agent")

    async with held(client, stand_ins, make_brief(max_steps=2), checkpoint.reached) as handle:
        refused = await refusal(handle)
        await handle.signal(ResearchWorkflow.escalate, EscalateInput(reason="deeper"))
        checkpoint.released.set()
        result = await handle.result()

    assert refused == AGENT_ALONE
    assert len(ignored(caplog)) == 1 and AGENT_ALONE in ignored(caplog)[0]
    assert (result.lanes, result.escalation) == (["agent"], "")


async def test_an_escalate_sent_with_the_start_of_an_agent_run_is_logged_as_ignored(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Before start_run says the lane the signal is taken; the agent lane logs it when it begins."""
    stand_ins = StandIns(
        FakeWeb(pages=PAGES),
        [Decision(tool_calls=[], text="")],
        started=contracts.StartRunResult(lane="agent"),
    )
    async with research_worker(client, stand_ins) as queue:
        result: RunResult = await client.execute_workflow(
            ResearchWorkflow.run,
            make_brief(max_steps=1),
            id="escalate-with-start",
            task_queue=queue,
            start_signal="escalate",
            start_signal_args=[EscalateInput(reason="deeper")],
        )

    assert len(ignored(caplog)) == 1 and AGENT_ALONE in ignored(caplog)[0]
    assert (result.lanes, result.escalation) == (["agent"], "")


async def test_a_run_that_already_escalated_refuses_escalate(client: Client) -> None:
    # The lane's report would leave Q2 without evidence: it escalates; the agent's turn is held.
    agent = [finish(["E001"])]
    checkpoint = Checkpoint(COMPOSE_TURN + 1)
    script = lanes_script(composed(CITED[0]), agent)
    stand_ins, _ = at_compose(script, "auto", checkpoint)

    async with held(client, stand_ins, make_brief(max_steps=9), checkpoint.reached) as handle:
        refused = await refusal(handle)
        checkpoint.released.set()
        result = await handle.result()

    assert refused == "the run already escalated to the agent (required Q2 has no evidence)"
    assert result.escalation == "required Q2 has no evidence"


async def test_escalate_after_the_fixed_lane_submitted_is_refused_and_the_lane_ends(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    stand_ins = HeldVerifier(lanes_script(composed(*CITED)))

    async with held(client, stand_ins, make_brief(), stand_ins.reached) as handle:
        refused = await refusal(handle)
        await handle.signal(ResearchWorkflow.escalate, EscalateInput(reason="deeper"))
        stand_ins.released.set()
        result = await handle.result()

    assert refused == SUBMITTED
    assert len(ignored(caplog)) == 1 and SUBMITTED in ignored(caplog)[0]
    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert (result.lanes, result.escalation) == (["fixed"], "")

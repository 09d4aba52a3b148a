"""The independent check of meaning in the workflow: asked only once the deterministic gate passed,
its verdicts are gate gaps, its tokens count, and a run that asked one replays from history."""

from __future__ import annotations

from collections.abc import Callable

from temporalio.client import Client
from temporalio.worker import Replayer

from runtime.converter import DATA_CONVERTER
from tests.workflow.harness import (
    PAGE_A,
    PAGE_B,
    PAGES,
    Checkpoint,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    record,
    research_worker,
    start,
)
from workflows import verification
from workflows.models import Decision, FinishNowInput, RunResult, RunStatus, StopReason, Usage
from workflows.research import ResearchWorkflow
from workflows.tools import GateFailed
from workflows.verification import VERIFY, VerdictWord, VerifyInput, VerifyResult

SCRIPT = [
    call("search_web", query="timeout attempts"),
    call("read_page", url=PAGE_A),
    call("read_page", url=PAGE_B),
    record("Q1", "S1", passage_id="S1.P2", claim="the timeout is 30 s"),
    record("Q2", "S2", passage_id="S2.P1", claim="5 attempts"),
]
HONEST = finish(["E001"], ["E002"])  # passes the deterministic gate
VERIFIER_USAGE = Usage(input_tokens=300, output_tokens=40)


def verifier_saying(said: Callable[[verification.Claim], VerdictWord]) -> StandIns:
    """Stand-ins whose verifier says `said(claim)` with the first quote's text as its sentence,
    read by the host's own rule (`verification.settle`)."""

    def verify(request: VerifyInput) -> VerifyResult:
        verdicts = [
            verification.settle(
                claim,
                said(claim),
                claim.quotes[0].text if claim.quotes else "",
                f"the quotes do not state {claim.label}",
                holding=[False] * len(claim.concerns),  # it settles every concern
                model="stand-in",
                usage=VERIFIER_USAGE,
            )
            for claim in request.claims
        ]
        return VerifyResult(
            verdicts=verdicts,
            usage=Usage(input_tokens=300 * len(verdicts), output_tokens=40 * len(verdicts)),
        )

    return StandIns(FakeWeb(pages=PAGES), [], verifier=verify)


async def play(client: Client, stand_ins: StandIns, script: list[Decision]) -> RunResult:
    stand_ins.script = script
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief())
        result: RunResult = await handle.result()
    return result


async def test_a_contradicted_finding_is_a_gate_gap_and_the_run_never_completes(
    client: Client,
) -> None:
    stand_ins = verifier_saying(lambda claim: "contradicted" if claim.number == 2 else "supported")

    result = await play(client, stand_ins, [*SCRIPT, HONEST])

    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
    )
    finishes = [step for step in stand_ins.web.steps if step.tool == "finish_research"]
    assert len(finishes) == 3 and not any(step.ok for step in finishes)
    entry = finishes[0].entry
    assert entry is not None and isinstance(entry.result.data, GateFailed)
    assert entry.result.data.gaps == [
        "finding 2 is contradicted by the quotes it cites, says the independent verifier: "
        "the quotes do not state finding 2 (say only what the quotes state)"
    ]
    assert len(stand_ins.verify_calls) == 3, "each submission is verified"
    # The verifier's tokens count: 3 submissions of 5 claims each (the answer, 2 findings, the
    # coverage of 2 required questions), beside the 8 model turns.
    assert result.counters.tokens == 8 * 10 + 3 * 5 * 340
    assert stand_ins.web.reports[-1].report.composed


async def test_supported_claims_complete_and_the_report_keeps_the_verdicts(client: Client) -> None:
    stand_ins = verifier_saying(lambda claim: "supported")

    result = await play(client, stand_ins, [*SCRIPT, HONEST])

    assert result.status == RunStatus.COMPLETED, result.message
    asked = stand_ins.verify_calls[0]
    assert asked.scope.step == 6 and [claim.number for claim in asked.claims] == [0, 1, 2, 3, 4]
    assert [claim.subject for claim in asked.claims[3:]] == ["coverage", "coverage"]
    assert [claim.question_id for claim in asked.claims[3:]] == ["Q1", "Q2"]
    assert [q.evidence_id for q in asked.claims[0].quotes] == ["E001", "E002"]
    assert [q.evidence_id for q in asked.claims[1].quotes] == ["E001"]
    assert asked.claims[1].questions == ["timeout"]
    saved = stand_ins.web.reports[-1].verification
    assert (saved.mode, saved.verifier) == ("model", "stand-in verifier")
    assert [(v.number, v.verdict, v.evidence_id) for v in saved.verdicts] == [
        (0, "supported", "E001"),
        (1, "supported", "E001"),
        (2, "supported", "E002"),
        (3, "supported", "E001"),
        (4, "supported", "E002"),
    ]
    assert result.counters.tokens == 6 * 10 + 5 * 340


async def test_a_supported_verdict_without_a_copied_sentence_counts_as_not_supported(
    client: Client,
) -> None:
    def verify(request: VerifyInput) -> VerifyResult:
        verdicts = [
            verification.settle(claim, "supported", "Harbor Queue never fails a message.", "")
            for claim in request.claims
        ]
        return VerifyResult(verdicts=verdicts)

    stand_ins = StandIns(FakeWeb(pages=PAGES), [], verifier=verify)

    result = await play(client, stand_ins, [*SCRIPT, HONEST])

    assert result.status == RunStatus.INCOMPLETE
    entry = stand_ins.web.steps[5].entry
    assert entry is not None and isinstance(entry.result.data, GateFailed)
    assert len(entry.result.data.gaps) == 5  # the answer, 2 findings, 2 questions' coverage
    assert all(verification.NOT_COPIED in gap for gap in entry.result.data.gaps)


async def test_a_verifier_that_supports_everything_never_sees_what_the_gate_refused(
    client: Client,
) -> None:
    stand_ins = verifier_saying(lambda claim: "supported")
    unknown = finish(["E001"], ["E009"])  # cites evidence never recorded: a deterministic gap

    result = await play(client, stand_ins, [*SCRIPT, unknown])

    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
    )
    assert stand_ins.verify_calls == []


async def test_a_run_that_asked_the_verifier_replays_from_its_history(client: Client) -> None:
    stand_ins = verifier_saying(lambda claim: "contradicted" if claim.number == 0 else "supported")
    stand_ins.script = [*SCRIPT, HONEST]
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief())
        await handle.result()
        history = await handle.fetch_history()

    replayer = Replayer(workflows=[ResearchWorkflow], data_converter=DATA_CONVERTER)
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
    verify_events = [
        event
        for event in history.events
        if event.activity_task_scheduled_event_attributes.activity_type.name == VERIFY
    ]
    assert len(verify_events) == 3


DERIVED = finish(["E001", "E002"])  # its finding: 5 attempts of 30 seconds, "150 seconds in all"
DERIVED.tool_calls[0].arguments = DERIVED.tool_calls[0].arguments.replace(
    "A queue message, its timeout and its delivery attempts.",
    "A queue message has 5 attempts with a timeout of 30 seconds each: 150 seconds in all.",
)


async def test_a_figure_the_rules_cannot_decide_is_left_to_the_verifier(client: Client) -> None:
    supported = verifier_saying(lambda claim: "supported")
    partly = verifier_saying(lambda claim: "partly" if claim.concerns else "supported")
    without = StandIns(FakeWeb(pages=PAGES), [])

    completed = await play(client, supported, [*SCRIPT, DERIVED])
    refused = await play(client, partly, [*SCRIPT, DERIVED])
    strict = await play(client, without, [*SCRIPT, DERIVED])

    assert completed.status == RunStatus.COMPLETED, completed.message
    (concern,) = supported.verify_calls[0].claims[1].concerns
    assert concern.startswith("finding 1 states 150 seconds, which the rules cannot match")
    assert refused.status == RunStatus.INCOMPLETE
    entry = partly.web.steps[5].entry
    assert entry is not None and isinstance(entry.result.data, GateFailed)
    assert entry.result.data.gaps == [
        "finding 1 is only partly supported by the quotes it cites, says the independent "
        "verifier: the quotes do not state finding 1 (state only the supported part; move the "
        "rest to the limitations as open)"
    ]
    # With no verifier, the rules refuse what they cannot decide.
    assert strict.status == RunStatus.INCOMPLETE
    entry = without.web.steps[5].entry
    assert entry is not None and isinstance(entry.result.data, GateFailed)
    assert "finding 1 states 150 seconds, which the rules cannot match" in entry.result.data.gaps[0]


async def test_an_operators_finish_has_its_composed_findings_verified(client: Client) -> None:
    """finish_now composes a report from the recorded claims; once it passes the gate, the
    verifier reads its findings (not the host's framing answer), keyed after the last step."""
    for said, status in (
        ("supported", RunStatus.COMPLETED),
        ("contradicted", RunStatus.INCOMPLETE),
    ):
        stand_ins = verifier_saying(lambda claim, said=said: said)
        stand_ins.script = [*SCRIPT, call("read_page", source_id="S1", find="timeout")]
        stand_ins.checkpoint = Checkpoint(6)
        async with research_worker(client, stand_ins) as queue:
            handle = await start(client, queue, make_brief())
            await stand_ins.checkpoint.reached.wait()
            await handle.signal(ResearchWorkflow.finish_now, FinishNowInput(reason="enough"))
            stand_ins.checkpoint.released.set()
            result: RunResult = await handle.result()

        assert (result.status, result.stop_reason) == (status, StopReason.OPERATOR_FINISH)
        asked = stand_ins.verify_calls[0]
        assert asked.scope.step == result.counters.steps + 1
        assert [claim.subject for claim in asked.claims] == [
            "finding",
            "finding",
            "coverage",
            "coverage",
        ], "no composed answer or limitations is read"
        saved = stand_ins.web.reports[-1]
        assert saved.report.composed and saved.verification.mode == "model"
        assert [verdict.verdict for verdict in saved.verification.verdicts] == [said] * 4
        assert result.counters.tokens == 5 * 10 + 4 * 340  # the held sixth turn is not read

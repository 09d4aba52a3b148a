"""A long run under a small context budget: once compaction alone no longer fits, decide folds the
oldest steps into a digest (`workflows.context.fold`), so the run goes on far past the step where
it used to end `context_limit`, and finishes through the gate citing evidence recorded in steps
that are only in the digest by then."""

from __future__ import annotations

from temporalio.client import Client

from starter.history import history_chain
from starter.replay import replay_history
from tests.workflow.harness import (
    PAGE_A,
    PAGE_B,
    PAGES,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    record,
    research_worker,
    start,
)
from workflows import context, contracts
from workflows.models import Decision, RunResult, RunStatus, StopReason
from workflows.tools import EvidenceData

FINISH_AT = 150
CONTEXT = 6_000
OPENING = [
    call("search_web", query="timeout attempts"),
    call("read_page", url=PAGE_A),
    record("Q1", "S1", passage_id="S1.P2", claim="the timeout is 30 s"),
    call("read_page", url=PAGE_B),
    record("Q2", "S2", passage_id="S2.P1", claim="5 attempts"),
]


def reader(request: contracts.DecideInput) -> Decision:
    """Re-reads its two sources until FINISH_AT, then cites the evidence it is shown per
    question: from the digest, since the steps that recorded it are folded by then."""
    turn = request.scope.turn
    if turn <= len(OPENING):
        return OPENING[turn - 1]
    if turn < FINISH_AT:
        return call("read_page", source_id=f"S{turn % 2 + 1}", find="timeout")
    folded = request.digest.evidence if request.digest is not None else []
    by_question = {q: [e.id for e in folded if e.question_id == q] for q in ("Q1", "Q2")}
    return finish(by_question["Q1"], by_question["Q2"])


async def test_a_small_context_folds_old_steps_and_the_run_finishes_far_past_its_old_stop(
    client: Client,
) -> None:
    web = FakeWeb(pages=PAGES)
    started = contracts.StartRunResult(continue_after_steps=50)
    stand_ins = StandIns(web, reader, started=started)
    async with research_worker(client, stand_ins) as queue:
        brief = make_brief(max_steps=FINISH_AT + 10, max_context_chars=CONTEXT)
        handle = await start(client, queue, brief)
        result: RunResult = await handle.result()
        histories = await history_chain(client, handle.id)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.counters.steps == FINISH_AT and len(histories) == 3
    assert [f.evidence_ids for f in result.report.findings] == [["E001"], ["E002"]]
    # Compaction alone would have ended the run here: the first turn it no longer fitted.
    entries = [step.entry for step in web.steps if step.entry is not None]
    budget = web.decide_calls[0].context_budget
    stopped = next(
        n
        for n in range(1, len(entries) + 1)
        if context.size(context.compact(entries[:n], budget)) > budget
    )
    assert stopped < FINISH_AT // 3, f"compaction alone stops at step {stopped}"
    # From there on each turn was shown a digest and its newest steps, within the budget.
    folded = [r for r in web.decide_calls if r.digest is not None]
    assert [r.scope.turn for r in folded] == list(range(stopped + 1, FINISH_AT + 1))
    assert all(r.context_chars <= r.context_budget == budget for r in web.decide_calls)
    last = web.decide_calls[-1]
    assert last.digest is not None and not any(
        isinstance(e.result.data, EvidenceData) for e in last.transcript
    ), "the evidence it cites is only in the digest"
    assert [s.id for s in last.digest.sources] == ["S1", "S2"]
    # Before the fold, the prompt was what it always was: no digest at all.
    assert all(r.digest is None for r in web.decide_calls[:stopped])
    for history in histories:
        assert await replay_history(history) is None

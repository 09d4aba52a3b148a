"""Each bound trips with its stop reason, and every stopped run saves a composed report."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from activities.model.prompt import messages
from tests.workflow.harness import (
    PAGE_A,
    PAGE_B,
    PAGES,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    own_test_server,
    record,
    research_worker,
    start,
    with_usage,
)
from workflows import contracts
from workflows.context import COMPACTED
from workflows.models import Brief, Decision, RefusedSeed, RunResult, RunStatus, StopReason
from workflows.tools import PageWindow
from workflows.transcript import ToolResult

SEARCH = call("search_web", query="timeout attempts")
READ_A = call("read_page", url=PAGE_A)
READ_B = call("read_page", url=PAGE_B)
RECORD_Q1 = record("Q1", "S1", passage_id="S1.P2", claim="the timeout is 30 s")


async def run(
    client: Client,
    web: FakeWeb,
    script: list[Decision],
    brief: Brief,
    decide_delay: float = 0.0,
    read_delay: float = 0.0,
) -> RunResult:
    stand_ins = StandIns(web, script, decide_delay=decide_delay, read_delay=read_delay)
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, brief)
        result: RunResult = await handle.result()
    return result


def result_of_step(web: FakeWeb, step: int) -> ToolResult:
    """The tool result of `step` as the model saw it in the following turn."""
    for request in web.decide_calls:
        for entry in request.transcript:
            if entry.step == step:
                return entry.result
    raise AssertionError(f"step {step} never reached the model")


def assert_stopped(web: FakeWeb, result: RunResult, reason: StopReason, open_: list[str]) -> None:
    """The run ended INCOMPLETE for `reason` and saved a composed report naming what is open."""
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, reason), result
    saved = web.reports[-1]
    assert (saved.status, saved.stop_reason) == (RunStatus.INCOMPLETE, reason)
    assert saved.report.composed
    assert saved.report.open_questions == open_
    assert saved.counters == result.counters
    if open_:
        assert f"Open questions: {', '.join(open_)}." in saved.report.limitations


async def test_step_limit_ends_the_run_with_a_report_of_what_was_recorded(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, RECORD_Q1, call("read_page", source_id="S1", find="timeout")]

    result = await run(client, web, script, make_brief(max_steps=5))

    assert_stopped(web, result, StopReason.STEP_LIMIT, ["Q2"])
    assert result.counters.steps == 5
    assert result.counters.model_calls == 5
    report = web.reports[-1].report
    assert "the step limit was reached" in report.limitations
    # No verifier judged the evidence claims: they are the model's notes, never findings.
    assert report.findings == [] and report.submitted is None
    assert [(note.evidence_id, note.question_id) for note in report.notes] == [("E001", "Q1")]
    assert report.notes[0].claim.startswith("the timeout is 30 s")


async def test_searches_past_the_budget_are_refused_and_the_run_goes_on(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        SEARCH,
        call("search_web", query="timeout again"),
        READ_A,
        READ_B,
        RECORD_Q1,
        record("Q2", "S2", passage_id="S2.P1"),
        finish(["E001"], ["E002"]),
    ]

    result = await run(client, web, script, make_brief(max_searches=1))

    refused = result_of_step(web, 2)
    assert not refused.ok
    assert refused.error == "search budget exhausted: read or record instead"
    assert refused.budget.searches_left == 0
    assert web.searches == ["timeout attempts"], "the refused search never reached the provider"
    assert result.counters.searches == 1
    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.counters.steps == 7


async def test_page_fetches_past_the_budget_are_refused_but_stored_pages_stay_readable(
    client: Client,
) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        SEARCH,
        READ_A,
        READ_B,
        call("read_page", source_id="S1", offset=18),
        call("read_page", url=PAGE_A, find="timeout"),
    ]

    result = await run(client, web, script, make_brief(max_page_fetches=1, max_steps=5))

    assert_stopped(web, result, StopReason.STEP_LIMIT, ["Q1", "Q2"])
    refused = result_of_step(web, 3)
    assert refused.error == "page budget exhausted: stored pages stay readable by source_id"
    assert refused.budget.pages_left == 0
    reread = result_of_step(web, 4)
    assert reread.ok and reread.data is not None
    assert isinstance(reread.data, PageWindow)
    assert [p.id for p in reread.data.passages] == ["S1.P2"]
    assert web.fetches == [PAGE_A], "re-reading a stored source does not fetch again"
    assert result.counters.page_fetches == 1
    assert [step.ok for step in web.steps] == [True, True, False, True, True]


async def test_a_failed_fetch_counts_against_the_page_budget(client: Client) -> None:
    missing = "https://a.example/missing"
    web = FakeWeb(pages=PAGES)
    script = [call("read_page", url=missing), READ_A, call("read_page", url=missing)]
    brief = make_brief(seeds=(missing, PAGE_A), max_page_fetches=1, max_steps=3)

    result = await run(client, web, script, brief)

    assert_stopped(web, result, StopReason.STEP_LIMIT, ["Q1", "Q2"])
    assert result_of_step(web, 1).error == f"{missing} could not be read: HTTP 404"
    assert result_of_step(web, 2).error == (
        "page budget exhausted: stored pages stay readable by source_id"
    )
    assert web.steps[2].error == f"{missing} could not be read: HTTP 404"
    assert web.fetches == [missing]
    assert result.counters.page_fetches == 1


async def test_an_unreadable_seed_is_named_before_the_first_step(client: Client) -> None:
    """A seed URL the run cannot read (here a page the web lacks) is read once when the run
    starts and named in the model's first request, before any step; the check counts no page
    fetch, and a brief without seeds is not checked at all."""
    missing = "https://a.example/faq.html"
    web = FakeWeb(pages=PAGES)
    brief = make_brief(seeds=(PAGE_A, missing), max_steps=2)

    result = await run(client, web, [READ_A, SEARCH], brief)

    assert web.seed_checks == [[PAGE_A, missing]]
    first = web.decide_calls[0]
    assert first.watermark == 0, "the first request, before any step"
    assert first.unreadable_seeds == [
        RefusedSeed(url=missing, reason="could not be read: HTTP 404")
    ]
    shown = messages(first)[1]["content"]  # the brief message
    assert shown.endswith(
        "Seed URLs the host could not read when the run started (do not read them):\n"
        f"- {missing} could not be read: HTTP 404"
    )
    assert all(request.unreadable_seeds == first.unreadable_seeds for request in web.decide_calls)
    assert web.fetches == [PAGE_A] and result.counters.page_fetches == 1

    quiet = FakeWeb(pages=PAGES)
    await run(client, quiet, [SEARCH], make_brief(max_steps=1))
    assert quiet.seed_checks == [] and quiet.decide_calls[0].unreadable_seeds == []


async def test_token_limit_ends_the_run_after_the_turn_that_crossed_it(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [with_usage(SEARCH, 300, 100), with_usage(READ_A, 300, 100), with_usage(READ_B, 300)]

    result = await run(client, web, script, make_brief(max_tokens=1_000))

    assert_stopped(web, result, StopReason.TOKEN_LIMIT, ["Q1", "Q2"])
    assert result.counters.tokens == 1_100
    assert result.counters.steps == 3, "the call of the turn that crossed the line still ran"
    assert result.counters.model_calls == 3
    assert [request.budget.tokens_left for request in web.decide_calls] == [1_000, 600, 200]
    assert "the token limit was reached" in web.reports[-1].report.limitations


async def test_deadline_passing_during_a_tool_call_ends_the_run_before_the_next_turn(
    client: Client,
) -> None:
    # Activities run in real time even on the time-skipping server. The model takes 0.5 s and the
    # page 0.8 s of a 1 s deadline; the read still finishes inside its own (1 s minimum) timeout.
    web = FakeWeb(pages=PAGES)
    brief = make_brief(seeds=(PAGE_A,), deadline_seconds=1)

    result = await run(client, web, [READ_A], brief, decide_delay=0.5, read_delay=0.8)

    assert_stopped(web, result, StopReason.DEADLINE, ["Q1", "Q2"])
    assert result.counters.steps == 1
    assert result.counters.model_calls == 1, "no model call is started after the deadline"
    assert "the deadline passed" in web.reports[-1].report.limitations


async def test_deadline_ends_a_run_whose_model_is_still_thinking() -> None:
    # Each turn takes 0.6 s of a 1 s deadline: the second turn is still thinking when the deadline
    # passes, and the deadline timer fires well before the (1 s minimum) activity timeout. Its
    # own server: the run ends while that model call still runs (see own_test_server).
    web = FakeWeb(pages=PAGES)

    async with own_test_server() as client:
        result = await run(
            client, web, [SEARCH, READ_A], make_brief(deadline_seconds=1), decide_delay=0.6
        )

    assert_stopped(web, result, StopReason.DEADLINE, ["Q1", "Q2"])
    assert result.counters.steps == 1
    assert result.counters.model_calls == 1, "the call the deadline cut never answered"


async def test_deadline_ends_a_run_whose_page_read_outlasts_it(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    brief = make_brief(seeds=(PAGE_A,), deadline_seconds=1)

    result = await run(client, web, [READ_A], brief, read_delay=2.0)

    assert_stopped(web, result, StopReason.DEADLINE, ["Q1", "Q2"])
    assert result.counters.page_fetches == 1


async def test_a_slow_model_within_the_deadline_still_completes(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        SEARCH,
        READ_A,
        READ_B,
        RECORD_Q1,
        record("Q2", "S2", passage_id="S2.P1"),
        finish(["E001"], ["E002"]),
    ]

    result = await run(client, web, script, make_brief(deadline_seconds=8), decide_delay=0.25)

    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert not web.reports[-1].report.composed


async def test_finish_attempts_exhausted_after_three_failed_submissions(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, RECORD_Q1, finish(["E001"]), finish(["E001"]), finish(["E001"])]
    gaps = [
        "required question Q2 has no cited evidence: attempts",
        "the cited evidence comes from 1 independent source(s); at least 2 are required "
        "(a mirror or another rendering of the same text counts once)",
    ]

    result = await run(client, web, script, make_brief())

    assert_stopped(web, result, StopReason.FINISH_ATTEMPTS_EXHAUSTED, ["Q2"])
    assert result.counters.finish_attempts == 3
    assert result.counters.steps == 6
    for step, left in [(4, 2), (5, 1)]:
        failed = result_of_step(web, step)
        assert failed.error == "the coverage gate failed"
        assert failed.data is not None
        assert failed.data.model_dump() == {
            "kind": "gate_failed",
            "gaps": gaps,
            "finish_attempts_left": left,
            "unread_urls": [PAGE_B],
        }
    assert web.steps[-1].error == "the coverage gate failed: " + "; ".join(gaps), (
        "gaps in the ledger"
    )
    assert result.message == "; ".join(gaps)
    report = web.reports[-1].report
    assert "every finish attempt failed the coverage gate: required question Q2" in (
        report.limitations
    )
    assert report.findings == [] and [note.evidence_id for note in report.notes] == ["E001"]
    # The model's last submission is kept, marked as not accepted, with the gaps that stopped it.
    assert report.submitted is not None and report.submitted.gaps == gaps


async def test_context_limit_when_the_latest_window_alone_does_not_fit(client: Client) -> None:
    big = "https://a.example/big"
    web = FakeWeb(pages={big: ["timeout " + "word " * 1_000]})
    script = [call("search_web", query="timeout"), call("read_page", url=big), SEARCH]

    result = await run(client, web, script, make_brief(max_context_chars=2_000))

    assert_stopped(web, result, StopReason.CONTEXT_LIMIT, ["Q1", "Q2"])
    assert result.counters.steps == 2
    assert len(web.decide_calls) == 2, "no model call is made with an over-long context"
    assert "the context limit was reached" in web.reports[-1].report.limitations


async def test_older_windows_are_compacted_so_the_run_goes_on(client: Client) -> None:
    pages = {f"https://a.example/p{n}": [f"timeout {n} " + "word " * 200] for n in (1, 2, 3)}
    web = FakeWeb(pages=pages)
    script = [call("search_web", query="timeout")] + [call("read_page", url=url) for url in pages]

    result = await run(client, web, script, make_brief(max_context_chars=5_000, max_steps=5))

    assert_stopped(web, result, StopReason.STEP_LIMIT, ["Q1", "Q2"])
    shown = web.decide_calls[-1]
    windows = [entry.result.data for entry in shown.transcript]
    texts = [window.passages[0].text[:9] for window in windows if isinstance(window, PageWindow)]
    assert texts == [COMPACTED[:9], "timeout 2", "timeout 3"]
    assert shown.context_chars <= 5_000


async def _decide_timeouts(client: Client, brief: Brief, model_timeout: float) -> list[float]:
    """The start-to-close timeout of each decide the workflow scheduled, in seconds, when the
    worker's start_run recorded `model_timeout` (RESEARCH_MODEL_TIMEOUT_SECONDS)."""
    started = contracts.StartRunResult(model_timeout_seconds=model_timeout)
    stand_ins = StandIns(FakeWeb(pages=PAGES), [SEARCH, SEARCH], started=started)
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, brief)
        await handle.result()
        history = await handle.fetch_history()
    return [
        attributes.start_to_close_timeout.ToTimedelta().total_seconds()
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        and (attributes := event.activity_task_scheduled_event_attributes).activity_type.name
        == contracts.DECIDE
    ]


async def test_the_decide_timeout_follows_the_workers_model_timeout(client: Client) -> None:
    # A model configured for 600 s gets 600 s and the ledger work around the call, not the old
    # fixed 120 s: a call still answering is never abandoned and asked again.
    brief = make_brief(max_steps=2, deadline_seconds=3_600)
    assert await _decide_timeouts(client, brief, 600.0) == [630.0, 630.0]
    assert await _decide_timeouts(client, brief, 0.0) == [120.0, 120.0], "an older worker"


async def test_the_decide_timeout_never_reaches_past_the_deadline(client: Client) -> None:
    brief = make_brief(max_steps=1, deadline_seconds=40)
    [timeout] = await _decide_timeouts(client, brief, 600.0)
    assert 40 < timeout <= 45, "the time left and the 5 s grace"


async def test_another_rendering_of_a_cited_page_is_not_a_second_source(client: Client) -> None:
    """The same page as its source file (a title line and a see-also line around the same text)
    on another host counts once, like a mirror: the submission citing both is refused."""
    rendering = "https://b.example/one.txt"
    text = [
        "Intro text here about how each queue handles its messages over time.",
        "The default timeout of a queue message is 30 seconds, after which it is visible again.",
        "Messages move to the dead-letter queue after 5 attempts, and stay there for 14 days.",
    ]
    pages = {PAGE_A: text, rendering: ["queue(7) manual", *text, "See also queue-admin(1)."]}
    web = FakeWeb(pages=pages)
    script = [
        SEARCH,
        READ_A,
        call("read_page", url=rendering),
        record("Q1", "S1", passage_id="S1.P2"),
        record("Q2", "S2", passage_id="S2.P4"),
        finish(["E001"], ["E002"]),
    ]

    await run(client, web, script, make_brief(max_steps=6))

    assert web.steps[-1].error == (
        "the coverage gate failed: the cited evidence comes from 1 independent source(s); at "
        "least 2 are required (a mirror or another rendering of the same text counts once)"
    )

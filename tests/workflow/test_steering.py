"""Operators steer a running investigation: finish, extend, guide, seed, query, cancel; and a
provider that refuses ends the run failed with a report."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError, CancelledError

from activities.markdown import render_markdown
from activities.model.prompt import messages
from activities.model.provider_errors import Provider, status_failure
from starter.steer import Steered, seed
from tests.workflow.harness import (
    PAGE_A,
    PAGE_B,
    PAGES,
    Checkpoint,
    FakeWeb,
    Script,
    StandIns,
    call,
    local_results,
    make_brief,
    own_test_server,
    record,
    refusing,
    research_worker,
    start,
)
from workflows import contracts
from workflows.activity import PROVIDER_ERROR
from workflows.models import (
    Brief,
    Decision,
    ExtendLimitsInput,
    FinishNowInput,
    GuidanceInput,
    Limits,
    RunResult,
    RunStatus,
    SeedUrlsInput,
    StopReason,
)
from workflows.research import ResearchWorkflow
from workflows.tools import PageWindow
from workflows.tools.record_evidence import (
    RECORD_EVIDENCE,
    RecordEvidenceInput,
    RecordEvidenceResult,
)

MODEL = Provider(label="model provider fake", credentials="FAKE_KEY", endpoint="FAKE_URL")
SEARCH = call("search_web", query="timeout attempts")
READ_A = call("read_page", url=PAGE_A)
QUOTE_A = record("Q1", "S1", passage_id="S1.P2", claim="30 s")
READ_B = call("read_page", url=PAGE_B)
REREAD_A = call("read_page", source_id="S1", offset=18)


@asynccontextmanager
async def held_run(
    client: Client, web: FakeWeb, script: list[Decision] | Script, brief: Brief, turn: int
) -> AsyncIterator[tuple[WorkflowHandle[Any, Any], Checkpoint]]:
    """A run whose model is held at `turn` until the test releases the checkpoint."""
    checkpoint = Checkpoint(turn)
    async with research_worker(client, StandIns(web, script, checkpoint=checkpoint)) as queue:
        handle = await start(client, queue, brief)
        await checkpoint.reached.wait()
        try:
            yield handle, checkpoint
        finally:
            checkpoint.released.set()


async def finished(handle: WorkflowHandle[Any, Any]) -> RunResult:
    result: RunResult = await handle.result()
    return result


async def test_finish_now_completes_when_the_composed_report_passes(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        SEARCH,
        READ_A,
        READ_B,
        record("Q1", "S1", passage_id="S1.P2", claim="30 s"),
        record("Q2", "S2", passage_id="S2.P1", claim="5 attempts"),
        REREAD_A,
    ]

    async with held_run(client, web, script, make_brief(), turn=6) as (handle, held):
        reason = "enough for the design review"
        await handle.signal(ResearchWorkflow.finish_now, FinishNowInput(reason=reason))
        held.released.set()
        result = await finished(handle)

    assert (result.status, result.stop_reason) == (RunStatus.COMPLETED, StopReason.OPERATOR_FINISH)
    # The model call in flight is abandoned at once: its turn is no step and counts no call.
    assert result.counters.steps == 5
    assert result.counters.model_calls == 5, "no model call after the operator asked to finish"
    assert result.message == reason, "the result says what the report was composed with (audit)"
    saved = web.reports[-1]
    assert (saved.status, saved.stop_reason) == (RunStatus.COMPLETED, StopReason.OPERATOR_FINISH)
    assert saved.report.composed
    assert [finding.evidence_ids for finding in saved.report.findings] == [["E001"], ["E002"]]
    assert "an operator asked it to finish: enough for the design review." in (
        saved.report.limitations
    ), "the operator's reason reaches the report (and the ledger with it)"
    markdown = render_markdown(saved.report, [], [], saved.status, saved.stop_reason)
    assert "it passed the coverage gate" in markdown and "did not complete" not in markdown


async def test_finish_now_ends_the_run_while_a_model_call_is_still_open(client: Client) -> None:
    """The model call is held open and never released: the run ends on the signal alone."""
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, record("Q1", "S1", passage_id="S1.P2", claim="30 s"), READ_B]

    async with held_run(client, web, script, make_brief(), turn=4) as (handle, held):
        await handle.signal(ResearchWorkflow.finish_now, FinishNowInput(reason="stop now"))
        # a guard against a hang, not a timing assert: the held call would wait forever
        result = await asyncio.wait_for(finished(handle), timeout=60)
        assert not held.released.is_set(), "the model call is still open"
        held.released.set()

    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.OPERATOR_FINISH,
    ), "Q2 has no evidence: the composed report cannot pass"
    assert (result.counters.steps, result.counters.model_calls) == (3, 3)
    saved = web.reports[-1]
    assert saved.stop_reason == StopReason.OPERATOR_FINISH and saved.report.composed
    assert [note.evidence_id for note in saved.report.notes] == ["E001"]


async def test_finish_now_is_incomplete_when_the_composed_report_fails(client: Client) -> None:
    web = FakeWeb(pages=PAGES)

    async with held_run(client, web, [SEARCH], make_brief(), turn=2) as (handle, held):
        await handle.signal(ResearchWorkflow.finish_now, FinishNowInput())
        held.released.set()
        result = await finished(handle)

    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.OPERATOR_FINISH,
    )
    assert result.counters.steps == 1, "the held turn was abandoned, not taken"
    saved = web.reports[-1]
    assert saved.report.composed
    assert saved.report.open_questions == ["Q1", "Q2"]


async def test_extend_limits_raises_max_steps_on_a_running_run(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, REREAD_A]

    async with held_run(client, web, script, make_brief(max_steps=3), turn=2) as (handle, held):
        before = await _details(handle)
        limits: Limits = await handle.execute_update(
            ResearchWorkflow.extend_limits, ExtendLimitsInput(max_steps=6, max_tokens=200_000)
        )
        after = await _details(handle)
        held.released.set()
        result = await finished(handle)
        progress = await handle.query(ResearchWorkflow.progress)

    assert limits == Limits(max_steps=6, max_tokens=200_000)
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.steps == 6
    assert web.decide_calls[2].budget.steps_left == 4
    assert progress.limits.max_steps == 6
    # The Web UI's current details follow the limits as `research status` does, at once.
    assert before.startswith("**step 1/3** searches 1/4 |") and "tokens 10/100000" in before
    assert after.startswith("**step 1/6** searches 1/4 |") and "tokens 10/200000" in after


async def _details(handle: WorkflowHandle[Any, Any]) -> str:
    """The run's current details, as the Web UI reads them."""
    metadata = await handle.query("__temporal_workflow_metadata")
    return str(metadata.current_details)


@pytest.mark.parametrize(
    ("request_", "sentence"),
    [
        (ExtendLimitsInput(max_steps=2), "max_steps can only be raised: it is 3, asked 2"),
        (ExtendLimitsInput(max_steps=1001), "max_steps 1001 is above its ceiling of 1000"),
    ],
)
async def test_extend_limits_refuses_lowering_and_leaves_the_run_unaffected(
    client: Client, request_: ExtendLimitsInput, sentence: str
) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, REREAD_A]

    async with held_run(client, web, script, make_brief(max_steps=3), turn=2) as (handle, held):
        with pytest.raises(WorkflowUpdateFailedError) as refused:
            await handle.execute_update(ResearchWorkflow.extend_limits, request_)
        held.released.set()
        result = await finished(handle)

    cause = refused.value.cause
    assert isinstance(cause, ApplicationError)
    assert cause.message == sentence
    assert (cause.type, cause.non_retryable) == ("LimitsRefused", True)
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.steps == 3


async def test_add_guidance_reaches_the_next_model_turn(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    text = "Prefer the official documentation over blog posts."

    async with held_run(client, web, [SEARCH], make_brief(max_steps=3), turn=1) as (handle, held):
        await handle.signal(ResearchWorkflow.add_guidance, GuidanceInput(text=text))
        held.released.set()
        await finished(handle)

    assert [request.guidance for request in web.decide_calls] == [[], [text], [text]]


async def test_add_seed_urls_makes_an_allowed_url_readable(client: Client) -> None:
    web = FakeWeb(pages={**PAGES, "https://evil.example/x": ["timeout"]})
    script = [READ_A, READ_A, call("read_page", url="https://evil.example/x")]
    seeds = SeedUrlsInput(urls=[PAGE_A, "https://evil.example/x"])

    async with held_run(client, web, script, make_brief(max_steps=4), turn=2) as (handle, held):
        await handle.signal(ResearchWorkflow.add_seed_urls, seeds)
        held.released.set()
        await finished(handle)

    results = [entry.result for entry in web.decide_calls[-1].transcript]
    assert results[0].error == f"{PAGE_A} is neither a seed URL nor a search result: search first"
    assert results[1].ok and results[1].data is not None
    assert isinstance(results[1].data, PageWindow) and results[1].data.source_id == "S1"
    assert results[2].error == (
        "https://evil.example/x is not on an allowed host (a.example, b.example)"
    )
    assert web.fetches == [PAGE_A], "an off-list seed never reaches the fetcher"


async def test_add_seeds_names_each_refused_url_and_shows_the_model_the_accepted_ones(
    client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    """The update (and `research signal RUN seed`, which sends it) says which URLs were taken and
    why each other one was refused; a taken one is readable and in every later prompt."""
    extra = "https://a.example/extra"
    web = FakeWeb(pages={**PAGES, extra: ["The extra page says the timeout is 30 seconds."]})
    read_extra = call("read_page", url=extra)
    script = [read_extra, read_extra, READ_A]
    sent = [
        extra,
        " https://a.example/extra ",  # the same URL, as pasted: known, not added twice
        "https://evil.example/x",
        "http://127.0.0.1/admin",
        "https://operator:hunter2@a.example/private",
        "a.example/no-scheme",
    ]

    async with held_run(client, web, script, make_brief(max_steps=3), turn=2) as (handle, held):
        refused_exit = await seed(Steered(handle, "", polled=True), handle.id, sent)
        again = await handle.execute_update(ResearchWorkflow.add_seeds, SeedUrlsInput(urls=[extra]))
        held.released.set()
        await finished(handle)

    printed = capsys.readouterr()
    assert refused_exit == 1
    assert printed.out.splitlines() == [
        f"Added seed URL {extra} to run {handle.id}",
        f"Seed URL {extra} was already a seed of run {handle.id}",
    ]
    assert printed.err.splitlines() == [  # the URLs no run could read first: never sent
        "Refused seed URL http://127.0.0.1/admin: it names an IP address, not a host name",
        "Refused seed URL https://a.example/private: it carries a user name or password",
        "Refused seed URL a.example/no-scheme: it is not an http(s) URL",
        "Refused seed URL https://evil.example/x: it is on evil.example, not an allowed host "
        "(a.example, b.example)",
    ]
    assert "hunter2" not in printed.out + printed.err
    assert (again.accepted, again.known, again.refused) == ([], [extra], [])
    results = [entry.result for entry in web.decide_calls[-1].transcript]
    assert results[0].error == f"{extra} is neither a seed URL nor a search result: search first"
    assert results[1].ok, "the seed taken while turn 2 was held is readable by its decision"
    assert [request.seeds for request in web.decide_calls] == [[], [], [extra]]
    prompt = messages(web.decide_calls[-1])
    assert prompt[-1] == {"role": "user", "content": f"Seed URLs added by the operator: {extra}"}


async def test_progress_reports_the_counters_of_a_running_run(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, record("Q1", "S1", passage_id="S1.P2")]

    async with held_run(client, web, script, make_brief(max_steps=3), turn=3) as (handle, held):
        running = await handle.query(ResearchWorkflow.progress)
        held.released.set()
        await finished(handle)
        ended = await handle.query(ResearchWorkflow.progress)

    assert running.status == RunStatus.RUNNING
    assert running.stop_reason is None
    assert running.counters.model_dump() == {
        "steps": 2,
        "searches": 1,
        "page_fetches": 1,
        "tokens": 20,
        "finish_attempts": 0,
        "model_calls": 2,  # the third call is still thinking: counters count answered calls
        "estimated_tokens": 0,
    }
    assert (running.evidence_count, running.source_count) == (0, 1)
    assert running.open_questions == ["Q1", "Q2"]
    assert running.last_action.startswith("read S1 a.example/one")
    assert [note.step for note in running.recent_steps] == [1, 2]
    assert 0 < running.seconds_left <= 300
    assert (ended.status, ended.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert (ended.counters.steps, ended.evidence_count, ended.open_questions) == (3, 1, ["Q2"])


async def test_cancelling_a_running_run_saves_a_cancelled_report(
    caplog: pytest.LogCaptureFixture,
) -> None:
    web = FakeWeb(pages=PAGES, render_reports=True)
    script = [SEARCH, READ_A, record("Q1", "S1", passage_id="S1.P2"), SEARCH]

    # Its own server: the run ends while the held model call still runs (see own_test_server).
    async with (
        own_test_server() as client,
        held_run(client, web, script, make_brief(), turn=4) as (handle, _),
    ):
        await handle.cancel()
        # The held model call stays held until the run has ended: a model call that completes
        # in the same instant as the cancellation races it on the test server.
        with pytest.raises(WorkflowFailureError) as ended:
            await handle.result()
        description = await handle.describe()
        # What the Web UI and `temporal workflow show` have of it: Temporal's cancellation carries
        # no details, so the report is the `save report` activity's result in the history, and
        # the run's current details (answered by a worker, as for any ended run).
        history = await handle.fetch_history()
        metadata = await handle.query("__temporal_workflow_metadata")

    assert isinstance(ended.value.cause, CancelledError)
    assert description.status == WorkflowExecutionStatus.CANCELED
    (saved_result,) = local_results(history, contracts.SAVE_REPORT)
    shown = json.loads(saved_result)["markdown"]
    assert "the run was cancelled" in shown and shown == web.saved_markdown[-1]
    assert metadata.current_details.startswith("**Research status: cancelled** | stop: cancelled")
    assert shown.splitlines()[0] in metadata.current_details
    saved = web.reports[-1]
    assert (saved.status, saved.stop_reason) == (RunStatus.CANCELLED, StopReason.CANCELLED)
    assert saved.report.composed
    assert saved.report.open_questions == ["Q2"]
    assert saved.report.findings == []
    assert [note.evidence_id for note in saved.report.notes] == ["E001"]
    assert "the run was cancelled" in saved.report.limitations
    assert saved.counters.steps == 3
    gc.collect()  # an abandoned task's exception is logged when the task is collected
    assert "never retrieved" not in caplog.text


async def test_a_provider_refusal_ends_the_run_failed_with_a_report(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = refusing("401 Unauthorized: invalid API key", before=[SEARCH])

    async with research_worker(client, StandIns(web, script)) as queue:
        result = await finished(await start(client, queue, make_brief()))

    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert result.message == "401 Unauthorized: invalid API key"
    assert result.counters.steps == 1
    assert len(web.decide_calls) == 2, "a non-retryable refusal is not retried"
    saved = web.reports[-1]
    assert (saved.status, saved.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert saved.report.composed
    assert (
        "a model or search provider refused or kept failing: 401 Unauthorized"
        in saved.report.limitations
    )


async def test_a_provider_that_keeps_failing_ends_the_run_failed_with_a_report() -> None:
    web = FakeWeb(pages=PAGES)

    def unavailable(request: Any) -> Decision:  # what the real decide raises for an HTTP 503
        raise status_failure(MODEL, 503, {}, "Service Unavailable")

    # Its own server, so the retry back-offs (1 + 2 + 4 + 8 s) are always skipped.
    async with (
        own_test_server() as client,
        research_worker(client, StandIns(web, unavailable)) as queue,
    ):
        result = await finished(await start(client, queue, make_brief()))

    assert len(web.decide_calls) == 5, "a provider's transient failures get 5 attempts"
    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert result.message.startswith("model provider fake answered HTTP 503 on 5 attempts")
    assert result.counters.model_calls == 0, "no call answered"
    assert web.reports[-1].status == RunStatus.FAILED


async def test_infrastructure_faults_are_retried_past_five_attempts_and_not_counted() -> None:
    """A worker lost or a database restarting fails attempts without any provider's say: they are
    retried (here 7 times) until the deadline, and the run ends as if nothing happened."""
    web = FakeWeb(pages=PAGES)
    attempts = 0

    def flaky(request: Any) -> Decision:
        nonlocal attempts
        attempts += 1
        if attempts <= 7:
            raise ConnectionResetError("the database is restarting")
        return SEARCH

    async with (
        own_test_server() as client,
        research_worker(client, StandIns(web, flaky)) as queue,
    ):
        result = await finished(await start(client, queue, make_brief(max_steps=1)))

    assert len(web.decide_calls) == 8
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.model_calls == 1, "the failed attempts asked no model"


async def test_infrastructure_down_past_the_deadline_fails_naming_the_fault() -> None:
    web = FakeWeb(pages=PAGES)
    down = ApplicationError("the database is restarting", type="OperationalError")

    async with (
        own_test_server() as client,
        research_worker(client, StandIns(web, [SEARCH], search_error=down)) as queue,
    ):
        result = await finished(await start(client, queue, make_brief(deadline_seconds=40)))

    assert (result.status, result.stop_reason) == (
        RunStatus.FAILED,
        StopReason.INFRASTRUCTURE_ERROR,
    )
    assert result.message == (
        "infrastructure: search_web failed until the deadline "
        "(OperationalError: the database is restarting)"
    )
    assert web.reports[-1].stop_reason == StopReason.INFRASTRUCTURE_ERROR


class LedgerDown(StandIns):
    """A ledger whose evidence writes fail: `record_evidence` runs as a local activity."""

    @activity.defn(name=RECORD_EVIDENCE)
    async def record_evidence(self, request: RecordEvidenceInput) -> RecordEvidenceResult:
        raise REFUSED


REFUSED = ApplicationError(
    "the ledger refused a write: x", type="LedgerRefused", non_retryable=True
)


async def ended_by_refusal(stand_ins: StandIns) -> str:
    """Run the brief on `stand_ins` until the ledger's refusal ends it `failed |
    infrastructure_error`; the activity its message names."""
    async with (
        own_test_server() as client,
        research_worker(client, stand_ins) as queue,
    ):
        handle = await start(client, queue, make_brief(deadline_seconds=40))
        result = await finished(handle)
    assert (result.status, result.stop_reason) == (
        RunStatus.FAILED,
        StopReason.INFRASTRUCTURE_ERROR,
    )
    named = result.message.removeprefix("infrastructure: ").split(" failed", 1)[0]
    assert result.message == (
        f"infrastructure: {named} failed and cannot be retried "
        "(LedgerRefused: the ledger refused a write: x)"
    )
    return named


class StepsRefused(StandIns):
    """A ledger that refuses step rows: the decide carrying them fails for good."""

    @activity.defn(name=contracts.DECIDE)
    async def decide(self, request: contracts.DecideInput) -> Decision:
        if request.records:
            raise REFUSED
        return await super().decide(request)

    @activity.defn(name=contracts.SAVE_REPORT)
    async def save_report(self, request: contracts.SaveReportInput) -> contracts.SaveReportResult:
        self.web.reports.append(request)  # as the real save: a refused step is left unrecorded
        return contracts.SaveReportResult()


async def test_a_refused_step_row_ends_the_run_by_cause_and_the_report_is_still_saved() -> None:
    """The step's row goes with the next decide: refused there, the run ends by that cause and
    the save carries the step again (and saves the report when the ledger refuses it once more)."""
    web = FakeWeb(pages=PAGES)
    assert await ended_by_refusal(StepsRefused(web, [SEARCH])) == "decide"
    saved = web.reports[-1]
    assert saved.stop_reason == StopReason.INFRASTRUCTURE_ERROR
    assert [(r.scope.step, r.tool) for r in saved.records] == [(1, "search_web")]
    assert saved.scope.fork.steps == 0 and saved.scope.fork.work == 1


async def test_a_local_activity_refused_for_good_ends_the_run_by_cause_with_a_report() -> None:
    """The SDK raises a local activity's failure itself, not as an ActivityError: the run must
    still end `failed | infrastructure_error` with its report, not fail the workflow."""
    web = FakeWeb(pages=PAGES)
    assert await ended_by_refusal(LedgerDown(web, [SEARCH, READ_A, QUOTE_A])) == "record_evidence"
    assert web.reports[-1].stop_reason == StopReason.INFRASTRUCTURE_ERROR
    assert [s.tool for s in web.steps] == ["search_web", "read_page"], "the steps before it"


async def test_cancelling_during_a_page_read_ends_cancelled_with_a_report(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK reports an activity cancelled by a workflow cancellation as an ActivityError; the
    run must still end CANCELLED (not failed) with its composed report."""
    web = FakeWeb(pages=PAGES, render_reports=True)
    script = [SEARCH, READ_A]

    async with (
        own_test_server() as client,
        research_worker(client, StandIns(web, script, read_delay=30)) as queue,
    ):
        handle = await start(client, queue, make_brief())
        while len(web.decide_calls) < 2:  # noqa: ASYNC110 (the second turn asks for the read)
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        await handle.cancel()
        with pytest.raises(WorkflowFailureError) as ended:
            await handle.result()
        description = await handle.describe()
        # What the Web UI and `temporal workflow show` have of it: Temporal's cancellation carries
        # no details, so the report is the `save report` activity's result in the history, and
        # the run's current details (answered by a worker, as for any ended run).
        history = await handle.fetch_history()
        metadata = await handle.query("__temporal_workflow_metadata")

    assert isinstance(ended.value.cause, CancelledError)
    assert description.status == WorkflowExecutionStatus.CANCELED
    (saved_result,) = local_results(history, contracts.SAVE_REPORT)
    shown = json.loads(saved_result)["markdown"]
    assert "the run was cancelled" in shown and shown == web.saved_markdown[-1]
    assert metadata.current_details.startswith("**Research status: cancelled** | stop: cancelled")
    assert shown.splitlines()[0] in metadata.current_details
    saved = web.reports[-1]
    assert (saved.status, saved.stop_reason) == (RunStatus.CANCELLED, StopReason.CANCELLED)
    assert saved.report.composed and saved.report.open_questions == ["Q1", "Q2"]
    gc.collect()  # an abandoned task's exception is logged when the task is collected
    assert "never retrieved" not in caplog.text


async def test_a_search_provider_refusal_ends_the_run_failed_as_a_provider_error(
    client: Client,
) -> None:
    web = FakeWeb(pages=PAGES)
    refusal = ApplicationError(
        "search provider serper answered HTTP 401: the credentials were rejected",
        type=PROVIDER_ERROR,
        non_retryable=True,
    )

    async with research_worker(client, StandIns(web, [SEARCH], search_error=refusal)) as queue:
        result = await finished(await start(client, queue, make_brief()))

    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert result.message == refusal.message
    assert web.searches == ["timeout attempts"], "a final refusal is not retried"

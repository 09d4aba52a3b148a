"""How each activity is run (`workflows.calling.options`, pure): where, with which heartbeat and
which timeouts, from its spec, what start_run recorded and the time left before the deadline."""

from __future__ import annotations

from datetime import timedelta

from workflows import contracts
from workflows.calling import HEARTBEAT, LOCAL_TIMEOUT, CallOptions, options
from workflows.models import Brief
from workflows.scope import RunScope
from workflows.tools.read_page import READ_PAGE_ACTIVITY, ReadPageInput
from workflows.tools.search_web import SEARCH_WEB_ACTIVITY, SearchInput
from workflows.verification import VERIFY_ACTIVITY, VerifyInput

SCOPE = RunScope.start("run", "execution")
HOUR = 3600.0
NOTHING_LOCAL = contracts.StartRunResult()
OFFLINE = contracts.StartRunResult(
    local_search=True, local_model=True, local_hosts=["docs.example"], model_timeout_seconds=45
)


def page(url: str, *, fetch: bool) -> ReadPageInput:
    return ReadPageInput(
        scope=SCOPE, source_id="S1", url=url, allowed_hosts=["docs.example"], fetch=fetch
    )


def search() -> SearchInput:
    return SearchInput(scope=SCOPE, query="q", allowed_hosts=["docs.example"])


def seconds(value: float) -> timedelta:
    return timedelta(seconds=value)


def test_ledger_work_runs_locally_with_the_local_attempt_and_no_heartbeat() -> None:
    step = contracts.StepRecord(scope=SCOPE, tool="search_web", arguments="{}", ok=True)
    got = options(contracts.RECORD_STEP_ACTIVITY, step, NOTHING_LOCAL, HOUR)
    assert got == CallOptions(True, LOCAL_TIMEOUT, seconds(300), None)


def test_a_search_runs_locally_only_where_the_worker_searches_its_corpus() -> None:
    web = options(SEARCH_WEB_ACTIVITY, search(), NOTHING_LOCAL, HOUR)
    assert web == CallOptions(False, seconds(60), seconds(300), HEARTBEAT)
    corpus = options(SEARCH_WEB_ACTIVITY, search(), OFFLINE, HOUR)
    assert corpus == CallOptions(True, LOCAL_TIMEOUT, seconds(300), None)


def test_a_page_read_is_local_when_stored_or_served_from_disk_and_regular_for_the_web() -> None:
    read = READ_PAGE_ACTIVITY
    stored = options(read, page("https://web.example/a", fetch=False), NOTHING_LOCAL, HOUR)
    assert stored.local
    assert options(read, page("https://docs.example/a", fetch=True), OFFLINE, HOUR).local
    web = options(read, page("https://web.example/a", fetch=True), OFFLINE, HOUR)
    assert web == CallOptions(False, seconds(60), seconds(300), HEARTBEAT)


def test_a_model_call_follows_the_recorded_model_timeout_and_runs_where_the_model_is() -> None:
    decide = contracts.DECIDE_ACTIVITY
    request = contracts.DecideInput(scope=SCOPE, brief=_brief())
    old_worker = options(decide, request, NOTHING_LOCAL, HOUR)  # recorded no model timeout
    assert old_worker == CallOptions(False, seconds(120), seconds(600), HEARTBEAT)
    recorded = contracts.StartRunResult(model_timeout_seconds=45)
    assert options(decide, request, recorded, HOUR).start_to_close == seconds(45 + 30)
    assert options(decide, request, OFFLINE, HOUR).local


def test_a_capped_timeout_ends_at_the_deadline_plus_the_activitys_grace() -> None:
    request = contracts.DecideInput(scope=SCOPE, brief=_brief())
    decide = options(contracts.DECIDE_ACTIVITY, request, NOTHING_LOCAL, 20)
    assert (decide.start_to_close, decide.schedule_to_close) == (seconds(25), seconds(25))
    verify = VerifyInput(scope=SCOPE)
    late = options(VERIFY_ACTIVITY, verify, NOTHING_LOCAL, 0)  # at least a second
    assert late == CallOptions(False, seconds(1), seconds(1), HEARTBEAT)


def test_start_run_and_the_save_run_however_late_with_attempts_of_their_own() -> None:
    save = contracts.SaveReportInput.model_construct()
    got = options(contracts.SAVE_REPORT_ACTIVITY, save, NOTHING_LOCAL, 0)
    assert got == CallOptions(True, seconds(30), seconds(150), None)
    start = contracts.StartRunInput(scope=SCOPE, brief=_brief(), started_at="")
    got = options(contracts.START_RUN_ACTIVITY, start, NOTHING_LOCAL, 0)
    assert got == CallOptions(True, LOCAL_TIMEOUT, seconds(300), None)


def test_the_verifier_gets_a_long_attempt_and_heartbeats() -> None:
    got = options(VERIFY_ACTIVITY, VerifyInput(scope=SCOPE), OFFLINE, HOUR)
    assert got == CallOptions(False, seconds(600), seconds(3000), HEARTBEAT)


def _brief() -> Brief:
    return Brief(question="What is it?", allowed_hosts=["docs.example"])

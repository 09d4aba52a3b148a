"""The tool contract as the model meets it: invalid calls cost a step, evidence must be proven."""

from __future__ import annotations

import json

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from tests.workflow.harness import (
    PAGE_A,
    PAGE_B,
    PAGES,
    FakeWeb,
    StandIns,
    call,
    finish,
    make_brief,
    markers_of,
    record,
    research_worker,
    start,
)
from workflows import contracts
from workflows.models import Brief, Decision, RunResult, RunStatus, StopReason, ToolCall, Usage
from workflows.tools import GateFailed
from workflows.transcript import ToolResult, TranscriptEntry

SEARCH = call("search_web", query="timeout attempts")
READ_A = call("read_page", url=PAGE_A)
READ_B = call("read_page", url=PAGE_B)
REREAD_A = call("read_page", source_id="S1", offset=18)


async def run(client: Client, web: FakeWeb, script: list[Decision], brief: Brief) -> RunResult:
    async with research_worker(client, StandIns(web, script)) as queue:
        handle = await start(client, queue, brief)
        result: RunResult = await handle.result()
    return result


def seen(web: FakeWeb) -> list[TranscriptEntry]:
    """The transcript as the model last saw it."""
    return web.decide_calls[-1].transcript


def result_of_step(web: FakeWeb, step: int) -> ToolResult:
    [entry] = [entry for entry in seen(web) if entry.step == step]
    return entry.result


def raw(name: str, arguments: str) -> Decision:
    return Decision(tool_calls=[ToolCall(name=name, arguments=arguments)], usage=Usage())


async def test_invalid_calls_cost_a_step_and_the_model_sees_why(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        call("browse", url=PAGE_A),
        raw("search_web", '{"query": '),
        call("search_web", query=5),
        Decision(text="I believe the timeout is 30 seconds."),
        Decision(tool_calls=[SEARCH.tool_calls[0], READ_A.tool_calls[0]]),
        call("search_web", query="timeout"),
    ]

    result = await run(client, web, script, make_brief(max_steps=6))

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.steps == 6
    assert web.searches == ["timeout"], "only the valid call reached the search provider"
    assert web.fetches == []
    errors = [
        (request.transcript[-1].step, request.transcript[-1].result.error)
        for request in web.decide_calls[1:]
    ]
    assert errors == [
        (
            1,
            "unknown tool 'browse'; the tools are search_web, read_page, record_evidence, "
            "finish_research",
        ),
        (2, "arguments of search_web are not valid JSON: Expecting value"),
        (3, "invalid arguments for search_web: query: Input should be a valid string"),
        (4, "no tool call in this turn: call exactly one tool per turn"),
        (5, "2 tool calls in this turn: call exactly one tool per turn"),
    ]
    assert seen(web)[3].call.arguments == "I believe the timeout is 30 seconds."
    assert [request.budget.steps_left for request in web.decide_calls] == [6, 5, 4, 3, 2, 1]
    assert [step.ok for step in web.steps] == [False] * 5 + [True]


async def test_a_fabricated_quote_is_refused_naming_the_source(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        SEARCH,
        READ_A,
        record("Q1", "S1", quote="The default timeout is 60 seconds."),
        record("Q1", "S1", quote="default timeout of a queue message is 30"),
        REREAD_A,
    ]

    result = await run(client, web, script, make_brief(max_steps=5))

    refused = result_of_step(web, 3)
    assert not refused.ok
    assert refused.error is not None and refused.error.startswith("quote not found verbatim in S1")
    accepted = result_of_step(web, 4)
    assert accepted.data is not None
    assert accepted.data.model_dump() == {
        "kind": "evidence",
        "evidence_id": "E001",
        "quote": "default timeout of a queue message is 30",
        # the whole sentence it was cut from: how the verifier and the report read it
        "sentence": "The default timeout of a queue message is 30 seconds.",
    }
    assert result.evidence_count == 1


async def test_evidence_from_a_search_snippet_alone_is_refused(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    snippet = "The default timeout is 30 seconds."
    script = [SEARCH, record("Q1", "S1", quote=snippet), record("Q1", "S2", passage_id="S2.P1")]

    result = await run(client, web, script, make_brief(max_steps=4))

    assert result_of_step(web, 2).error == (
        "unknown source_id S1: evidence must come from a page you have read (known: none yet); "
        "search snippets cannot be evidence"
    )
    assert str(result_of_step(web, 3).error).startswith("unknown source_id S2:")
    assert result.evidence_count == 0
    assert web.reports[-1].report.findings == []


async def test_a_passage_of_another_source_is_refused(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, READ_B, record("Q1", "S1", passage_id="S2.P1")]

    result = await run(client, web, script, make_brief(max_steps=5))

    assert result_of_step(web, 4).error == "passage S2.P1 does not belong to S1"
    assert result.evidence_count == 0


async def test_a_passage_id_records_the_exact_stored_text(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, record("Q1", "S1", passage_id="S1.P2", claim="30 s"), REREAD_A]

    result = await run(client, web, script, make_brief(max_steps=4))

    data = result_of_step(web, 3).data
    assert data is not None
    assert data.model_dump() == {
        "kind": "evidence",
        "evidence_id": "E001",
        "quote": "The default timeout of a queue message is 30 seconds.",
    }
    assert result.evidence_count == 1
    assert [note.evidence_id for note in web.reports[-1].report.notes] == ["E001"]


async def test_the_run_completes_only_when_the_gate_passes(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        SEARCH,
        READ_A,
        record("Q1", "S1", passage_id="S1.P2"),
        finish(["E001"]),
        READ_B,
        record("Q2", "S2", quote="the dead-letter queue after 5 attempts"),
        finish(["E001"], ["E002"], limitations="Only the defaults were checked."),
    ]

    result = await run(client, web, script, make_brief())

    early = result_of_step(web, 4)
    assert early.error == "the coverage gate failed"
    assert early.data is not None
    assert isinstance(early.data, GateFailed)
    assert "required question Q2 has no cited evidence: attempts" in early.data.gaps
    assert (result.status, result.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert result.counters.steps == 7
    assert result.counters.finish_attempts == 2
    assert result.independent_sources == 2
    saved = web.reports[-1]
    assert (saved.status, saved.stop_reason) == (
        RunStatus.COMPLETED,
        StopReason.COVERAGE_GATE_PASSED,
    )
    assert not saved.report.composed
    assert [finding.evidence_ids for finding in saved.report.findings] == [["E001"], ["E002"]]
    assert saved.report.limitations == "Only the defaults were checked."
    assert saved.report.open_questions == []
    assert web.steps[-1].ok


async def test_every_tool_result_carries_the_budget_left(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [SEARCH, READ_A, READ_B, record("Q1", "S1", passage_id="S1.P2"), SEARCH, SEARCH]
    brief = make_brief(max_steps=6, max_searches=3, max_page_fetches=4, max_tokens=1_000)

    await run(client, web, script, brief)

    budgets = [entry.result.budget for entry in seen(web)]
    assert [b.steps_left for b in budgets] == [5, 4, 3, 2, 1]
    assert [b.searches_left for b in budgets] == [2, 2, 2, 2, 1]
    assert [b.pages_left for b in budgets] == [4, 3, 2, 2, 2]
    assert [b.tokens_left for b in budgets] == [990, 980, 970, 960, 950]
    assert all(0 < b.seconds_left <= 300 for b in budgets)


def parallel(*decisions: Decision) -> Decision:
    """One turn carrying several calls, when the worker allowed parallel tool calls."""
    calls = [decision.tool_calls[0] for decision in decisions]
    return Decision(tool_calls=calls, usage=Usage(input_tokens=8), parallel_tool_calls=True)


async def test_allowed_parallel_calls_run_in_order_a_step_each(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [parallel(SEARCH, READ_A, READ_B), call("search_web", query="attempts")]

    result = await run(client, web, script, make_brief(max_steps=4))

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert [step.tool for step in web.steps] == [
        "search_web",
        "read_page",
        "read_page",
        "search_web",
    ]
    assert web.fetches == [PAGE_A, PAGE_B]
    assert result.counters.model_calls == 2


async def test_parallel_calls_stop_at_the_step_bound_mid_turn(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [parallel(SEARCH, READ_A, READ_B)]

    result = await run(client, web, script, make_brief(max_steps=2))

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.steps == 2
    assert web.fetches == [PAGE_A], "the third call was not run"


HUGE_OFFSET = '{"url": "https://a.example/one", "offset": 9' + "9" * 6_000 + "}"
DEEP = '{"query": ' + "[" * 10_000 + "]" * 10_000 + "}"
UNSTORABLE = '{"question_id": "Q1\\u0000", "source_id": "\\ud800"}'
NASTIEST = [
    ToolCall(name="read_page", arguments=HUGE_OFFSET),
    ToolCall(name="search_web", arguments=DEEP),
    ToolCall(name="read_page", arguments=json.dumps({"url": "https://a.example/" + "x" * 200_000})),
    ToolCall(name="x" * 200_000, arguments="{}"),
    ToolCall(name="record_evidence", arguments=UNSTORABLE),
    ToolCall(name="search_web\x00", arguments="\x00{"),
]


async def test_the_nastiest_calls_end_the_run_within_its_bounds(client: Client) -> None:
    """The stand-in model bypasses decide's own cleaning: the workflow defends itself."""
    web = FakeWeb(pages=PAGES)
    script = [Decision(tool_calls=[nasty]) for nasty in NASTIEST]
    brief = make_brief(max_steps=len(NASTIEST))

    async with research_worker(client, StandIns(web, script)) as queue:
        handle = await start(client, queue, brief)
        result: RunResult = await handle.result()
        history = await handle.fetch_history()

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert [step.ok for step in web.steps] == [False] * len(NASTIEST)
    assert all(
        len(step.arguments) <= 32_000 and len(step.error or "") <= 2_400 for step in web.steps
    )
    failed = EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    assert not [event for event in history.events if event.event_type == failed]
    decide_inputs = [request.model_dump_json() for request in web.decide_calls]
    assert max(map(len, decide_inputs)) < 60_000, "the transcript keeps only capped calls"


async def test_a_page_read_needing_no_network_runs_in_the_worker(client: Client) -> None:
    """A read of a host the worker serves from disk, or of a stored source, is a local activity
    (no workflow task of its own); any other host's is a regular activity."""
    web = FakeWeb(pages=dict(PAGES))
    served_from_disk = contracts.StartRunResult(local_hosts=["a.example"])
    script = [SEARCH, READ_A, READ_B, REREAD_A, finish()]
    stand_ins = StandIns(web, script, started=served_from_disk)
    async with research_worker(client, stand_ins) as queue:
        handle = await start(client, queue, make_brief(max_steps=5))
        await handle.result()
        history = await handle.fetch_history()

    regular = [
        event.activity_task_scheduled_event_attributes.activity_type.name
        for event in history.events
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
    ]
    local = [
        json.loads(marker.details["data"].payloads[0].data)["activity_type"]
        for marker in markers_of(history)
        if marker.marker_name == "core_local_activity"
    ]
    assert regular.count("read_page") == 1  # b.example's
    assert local.count("read_page") == 2  # a.example's, and S1 read again from the ledger
    assert web.fetches == [PAGE_A, PAGE_B]

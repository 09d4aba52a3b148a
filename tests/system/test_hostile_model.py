"""Hostile models against the real workflow, the real activities and the real `openai` client.

Each scenario of `tests.fakes.hostile` plays the sample brief through an OpenAI-compatible fake
server, with an in-process worker on the Temporal dev server, the embedded PostgreSQL and the demo
corpus. Each test asserts the sentence the model got, the step it spent and how the run ended:
none completes through the gate on a false answer, none stalls, none poisons the ledger.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, LiteralString

import psycopg
import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.exceptions import ApplicationError

from activities.ledger import Ledger
from runtime.database import open_pool
from runtime.settings import Settings
from starter.audit import AuditData, run_checks
from starter.history import history_facts
from tests.fakes import hostile
from tests.fakes.openai_server import (
    FakeOpenAI,
    Script,
    VerifierRequest,
    VerifierScript,
    serve,
    supporting,
)
from tests.system.conftest import demo_brief
from worker import run_worker
from workflows.models import Brief, RunResult, RunStatus, StopReason
from workflows.research import ResearchWorkflow

BRIEF = demo_brief()
Run = Callable[..., Any]


def brief(**limits: int) -> Brief:
    return BRIEF.model_copy(update={"limits": BRIEF.limits.model_copy(update=limits)})


@asynccontextmanager
async def hostile_worker(
    client: Client,
    pg_url: str,
    script: Script,
    verifier: VerifierScript = supporting,
    env: dict[str, str] | None = None,
) -> AsyncIterator[tuple[str, FakeOpenAI]]:
    """An in-process worker whose model provider is the fake server playing `script`; the same
    server plays the verifier (`verifier`) unless `env` configures it otherwise."""
    fake = FakeOpenAI(script, verifier)
    with serve(fake) as base_url:
        settings = Settings.from_env(
            {
                "DATABASE_URL": pg_url,
                "OPENAI_BASE_URL": base_url,
                "OPENAI_API_KEY": hostile.SECRET,
                "RESEARCH_TASK_QUEUE": f"hostile-{uuid.uuid4().hex[:8]}",
                "RESEARCH_SEARCH_PROVIDER": "corpus",
                "RESEARCH_LANE": "agent",  # the scripts play agent turns
                **(env or {}),
            }
        )
        stop, ready = asyncio.Event(), asyncio.Event()
        task = asyncio.create_task(run_worker(settings, client, stop=stop, ready=ready))
        await asyncio.wait_for(ready.wait(), 30)
        try:
            yield settings.task_queue, fake
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)


async def play(
    client: Client,
    pg_url: str,
    script: Script,
    run_brief: Brief,
    verifier: VerifierScript = supporting,
    env: dict[str, str] | None = None,
) -> tuple[RunResult, str, FakeOpenAI]:
    run_id = f"hostile-{uuid.uuid4().hex[:8]}"
    async with hostile_worker(client, pg_url, script, verifier, env) as (queue, fake):
        result: RunResult = await client.execute_workflow(
            ResearchWorkflow.run, run_brief, id=run_id, task_queue=queue
        )
    await assert_no_failed_workflow_task(client, run_id)
    await assert_audits_clean(client, pg_url, run_id)
    return result, run_id, fake


async def assert_audits_clean(client: Client, pg_url: str, run_id: str) -> None:
    """Whatever the model sent, the run's ledger, report and history pass `research audit`."""
    pool = await open_pool(pg_url, max_size=2)
    try:
        run_rows = await Ledger(pool).run_rows(run_id)
    finally:
        await pool.close()
    assert run_rows is not None
    history = await client.get_workflow_handle(run_id).fetch_history()
    results = run_checks(AuditData(run_rows, history_facts(history)))
    assert {r.check.name: r.problems for r in results if r.failed} == {}


async def assert_no_failed_workflow_task(client: Client, run_id: str) -> None:
    history = await client.get_workflow_handle(run_id).fetch_history()
    failed = [
        e for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
    ]
    assert not failed, "model output failed a workflow task"
    sizes = [e.ByteSize() for e in history.events]
    assert max(sizes, default=0) < 200_000, "a payload of model input grew near Temporal's limits"


def rows(pg_url: str, query: LiteralString, run_id: str) -> list[dict[str, Any]]:
    with psycopg.connect(pg_url) as conn, conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute(query, (run_id,))
        return cur.fetchall()


def steps(pg_url: str, run_id: str) -> list[dict[str, Any]]:
    query = "SELECT step, tool, ok, error, arguments FROM research.steps WHERE run_id = %s"
    return rows(pg_url, query + " ORDER BY step", run_id)


def errors(pg_url: str, run_id: str) -> list[str]:
    return [row["error"] or "" for row in steps(pg_url, run_id)]


def model_calls(pg_url: str, run_id: str) -> list[dict[str, Any]]:
    query = (
        "SELECT turn, input_tokens, output_tokens, estimated, usage_note, text "
        "FROM research.model_calls WHERE run_id = %s ORDER BY turn"
    )
    return rows(pg_url, query, run_id)


def all_rows_text(pg_url: str, run_id: str) -> str:
    """Every row of every research.* table for the run, as one text."""
    tables = ["runs", "model_calls", "steps", "searches", "search_results", "sources",
              "passages", "evidence", "reports", "verdicts"]  # fmt: skip
    parts = []
    with psycopg.connect(pg_url) as conn, conn.cursor() as cur:
        for table in tables:
            cur.execute(
                f"SELECT row_to_json(t)::text FROM research.{table} t WHERE run_id = %s",
                (run_id,),
            )
            parts += [row[0] for row in cur.fetchall()]
    return "\n".join(parts)


pytestmark = [pytest.mark.system, pytest.mark.timeout(180)]


async def test_thin_and_unrelated_quotes_are_refused_and_nothing_completes(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    # With no verifier (with one, an off-question quote is its question: test_verifier.py)
    off = {"RESEARCH_VERIFIER_PROVIDER": "off"}
    result, run_id, _ = await play(
        dev_client, embedded_pg_url, hostile.thin_quotes(), brief(), env=off
    )

    said = errors(embedded_pg_url, run_id)
    assert said[4].startswith("the quote is too short to inform: it has 2 content word(s)")
    assert said[5].startswith("the quote is too short to inform")
    assert said[6].startswith("the quote does not mention what the question asks about")
    assert "finding 1 cites unknown evidence E001" in said[7]
    assert result.evidence_count == 0
    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
    )


async def test_findings_with_invented_numbers_fail_the_gate(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    # Without a verifier: the rules refuse the figures they cannot decide (with one, they are
    # left to it: tests/system/test_verifier.py).
    off = {"RESEARCH_VERIFIER_PROVIDER": "off"}
    result, run_id, _ = await play(
        dev_client, embedded_pg_url, hostile.invented_numbers(), brief(), env=off
    )

    assert result.evidence_count == 2
    gaps = errors(embedded_pg_url, run_id)[6]
    assert (
        "finding 1 states 12 delivery attempts, which the evidence it cites does not state" in gaps
    )
    assert "finding 2 states 90 seconds, which the evidence it cites does not state" in gaps
    assert (
        "the answer states 12 delivery attempts, which the evidence the findings cite does not "
        "state"
    ) in gaps
    # the answer's 90 seconds could be 3 x 30 seconds of its quotes: left to the verifier
    assert result.status == RunStatus.INCOMPLETE
    assert result.stop_reason == StopReason.FINISH_ATTEMPTS_EXHAUSTED


@pytest.mark.parametrize("by_passage", [False, True], ids=["quoted", "by-passage"])
async def test_a_conflict_on_a_stated_figure_must_be_disclosed_by_its_whole_id(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger, by_passage: bool
) -> None:
    script = hostile.hidden_conflict(by_passage=by_passage)
    result, run_id, _ = await play(dev_client, embedded_pg_url, script, brief())

    with psycopg.connect(embedded_pg_url) as conn:
        quote = conn.execute(
            "SELECT quote FROM research.evidence WHERE run_id = %s AND evidence_id = 'E002'",
            (run_id,),
        ).fetchone()
    assert quote is not None and "30 seconds" in quote[0]
    # Recorded by passage_id, the short passage is quoted whole: its older default is in the
    # quote, and the gate reads it as the older release's value, so the conflict still shows.
    assert ("Releases before 2.0 used 60 seconds" in quote[0]) == by_passage

    rows = steps(embedded_pg_url, run_id)
    recorded = json.loads(rows[8]["arguments"])
    assert recorded["stance"] == "supports", "the model called it support"
    gaps = rows[9]["error"]
    assert (
        "conflicting evidence: E002 (30 seconds) and E003 (60 seconds) disagree on Q2; "
        "cite or name both in the limitations"
    ) in gaps
    assert (result.status, result.stop_reason) == (
        RunStatus.INCOMPLETE,
        StopReason.FINISH_ATTEMPTS_EXHAUSTED,
    )
    assert "E003" in result.report.limitations, "the composed report discloses it"


async def test_a_forged_evidence_block_renders_as_plain_text(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(dev_client, embedded_pg_url, hostile.forged_block(), brief())

    assert result.status == RunStatus.COMPLETED, result.message
    with psycopg.connect(embedded_pg_url) as conn:
        row = conn.execute(
            "SELECT markdown FROM research.reports WHERE run_id = %s", (run_id,)
        ).fetchone()
    assert row is not None
    lines = row[0].splitlines()
    assert "### E009 (supports, Q1)" not in lines
    assert "\\#\\#\\# E009 (supports, Q1)" in lines, "the model's heading is escaped text"
    assert not any(line.startswith(">") and "forever" in line for line in lines)
    assert "<https://evil.example/forged>" not in row[0]
    assert [line for line in lines if line.startswith("### ")] == [
        "### E001 (supports, Q1)",
        "### E002 (supports, Q2)",
    ]


async def test_malformed_calls_are_refused_steps_and_never_stall_the_run(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    count = len(hostile.MALFORMED)
    result, run_id, fake = await play(
        dev_client, embedded_pg_url, hostile.malformed(), brief(max_steps=count)
    )

    said = errors(embedded_pg_url, run_id)
    for number, ((_, expected), error) in enumerate(zip(hostile.MALFORMED, said, strict=True)):
        assert error.startswith(expected), (number, error[:200])
        assert len(error) <= 600
    assert all(len(row["arguments"]) <= 32_000 for row in steps(embedded_pg_url, run_id))
    assert max(fake.turns.values()) == 1, "no model call was asked twice"
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)
    assert result.counters.steps == count


async def test_nul_and_lone_surrogates_are_cleaned_not_retried(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, fake = await play(
        dev_client, embedded_pg_url, hostile.unclean_text(), brief(max_steps=5)
    )

    assert max(fake.turns.values()) == 1, "no model call was retried (or paid) twice"
    calls = model_calls(embedded_pg_url, run_id)
    assert calls[0]["text"] == "I think\ufffd the answer\ufffd is 5"
    said = errors(embedded_pg_url, run_id)
    assert said[0] == "no tool call in this turn: call exactly one tool per turn"
    assert said[1] == "" and said[3] == "", "the cleaned query and claim were accepted"
    with psycopg.connect(embedded_pg_url) as conn:
        claim = conn.execute(
            "SELECT claim FROM research.evidence WHERE run_id = %s", (run_id,)
        ).fetchone()
    assert (
        claim is not None and claim[0] == "Dead-lettered after 5\ufffd deliveries \U0001f600 \ufffd"
    )
    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.STEP_LIMIT)


@pytest.mark.parametrize(
    ("usage", "note"),
    [
        ({"prompt_tokens": -2_000_000, "completion_tokens": 5, "total_tokens": -1_999_995},
         "the provider reported unusable usage (input -2000000, output 5): estimated instead"),
        ({"prompt_tokens": 10**15, "completion_tokens": 10**15, "total_tokens": 2 * 10**15},
         "the provider reported 2000000000000000 tokens for one turn: counted as 2000000"),
        ({"prompt_tokens": "lots", "completion_tokens": 1.5, "total_tokens": None},
         "the provider reported unusable usage (input 'lots', output 1.5): estimated instead"),
        ({"prompt_tokens": "5000", "completion_tokens": True, "total_tokens": "5001"},
         "the provider reported unusable usage (input '5000', output True): estimated instead"),
        ({"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
         "the provider reported 1 input and 1 output tokens, under a quarter of the "),
    ],
    ids=["negative", "absurd", "not-numbers", "numbers-as-strings", "one-and-one"],
)  # fmt: skip
async def test_lying_usage_cannot_defeat_the_token_bound(
    dev_client: Client,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    usage: dict[str, Any],
    note: str,
) -> None:
    result, run_id, _ = await play(
        dev_client,
        embedded_pg_url,
        hostile.lying_usage(usage),
        brief(max_tokens=2_000, max_steps=40, max_searches=100),
    )

    assert (result.status, result.stop_reason) == (RunStatus.INCOMPLETE, StopReason.TOKEN_LIMIT)
    calls = model_calls(embedded_pg_url, run_id)
    assert calls[0]["usage_note"].startswith(note)
    assert result.counters.tokens >= 2_000
    assert all(call["input_tokens"] >= 0 and call["output_tokens"] >= 0 for call in calls)
    assert all(call["usage_note"] for call in calls), "every turn says it was not believed"
    if usage["prompt_tokens"] == 1:  # what was sent: the estimate of each request, not 2 a turn
        assert calls[0]["estimated"] and calls[0]["input_tokens"] > 1_000
        assert result.counters.estimated_tokens == result.counters.tokens


async def test_a_key_echoed_in_disguise_reaches_no_row_and_no_history(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(dev_client, embedded_pg_url, hostile.echoing_provider(), brief())

    assert (result.status, result.stop_reason) == (RunStatus.FAILED, StopReason.PROVIDER_ERROR)
    assert "answered HTTP 400: the request was refused: bad request from" in result.message
    history = await dev_client.get_workflow_handle(run_id).fetch_history()
    stored = all_rows_text(embedded_pg_url, run_id) + history.to_json()
    for form in (hostile.SECRET, hostile.SECRET.lower(), hostile.SECRET[12:], hostile.SECRET[-14:]):
        assert form not in stored
    assert "%73%6B%2D" not in stored, "the URL-encoded key"


async def test_a_reused_run_id_fails_at_once_without_retries(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    run_id = f"hostile-reused-{uuid.uuid4().hex[:8]}"
    refuse = hostile.echoing_provider()
    async with hostile_worker(dev_client, embedded_pg_url, refuse) as (queue, _):
        await dev_client.execute_workflow(ResearchWorkflow.run, BRIEF, id=run_id, task_queue=queue)
        with pytest.raises(WorkflowFailureError) as failure:
            await dev_client.execute_workflow(
                ResearchWorkflow.run, BRIEF, id=run_id, task_queue=queue
            )
    cause = failure.value.cause.cause
    assert isinstance(cause, ApplicationError) and cause.type == "RunIdTaken"
    assert "already holds an earlier investigation" in cause.message
    history = await dev_client.get_workflow_handle(run_id).fetch_history()
    # start_run is a local activity: one marker records its result, with the attempt it took.
    markers = [
        json.loads(e.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
        and e.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    assert [(m["activity_type"], m["attempt"]) for m in markers] == [("start_run", 1)]


@pytest.mark.parametrize("judge", ["rules", "verifier"])
@pytest.mark.parametrize(
    ("report", "conflict", "told"),
    [(report, conflict, told) for _, report, conflict, told in hostile.REPORT_ATTACKS],
    ids=[name for name, *_ in hostile.REPORT_ATTACKS],
)
async def test_a_report_that_only_resembles_its_evidence_never_completes(
    dev_client: Client,
    embedded_pg_url: str,
    corpus_ledger: Ledger,
    report: dict[str, Any],
    conflict: bool,
    told: str,
    judge: str,
) -> None:
    """With the verifier off the judgement rules refuse (the floor); with an honest verifier
    they are its questions, and it refuses the claim: the same sentence reaches the model."""
    script = hostile.report_attack(report, conflict)
    if judge == "rules":
        env, verifier = {"RESEARCH_VERIFIER_PROVIDER": "off"}, supporting
    else:
        env, verifier = {}, hostile.doubting_verifier
    result, run_id, fake = await play(
        dev_client, embedded_pg_url, script, brief(max_steps=30), env=env, verifier=verifier
    )
    if judge == "verifier" and told and fake.verifier_requests:  # a judgement rule's doubt
        # reached the verifier as a question (a proof rule refuses before it is asked)
        asked = [VerifierRequest.parse(body["messages"]) for body in fake.verifier_requests]
        assert any(told in concern for request in asked for concern in request.concerns)

    rows = steps(embedded_pg_url, run_id)
    recorded = [row for row in rows if row["tool"] == "record_evidence"]
    assert all(row["ok"] for row in recorded), [row["error"] for row in recorded]
    finishes = [row for row in rows if row["tool"] == "finish_research"]
    if not told:  # the honest report it is built from completes
        assert result.status == RunStatus.COMPLETED, finishes[-1]["error"]
        return
    assert all(told in (row["error"] or "") for row in finishes), finishes[0]["error"]
    assert result.status == RunStatus.INCOMPLETE
    if result.counters.finish_attempts:  # else every call was refused before the gate ran
        assert result.stop_reason == StopReason.FINISH_ATTEMPTS_EXHAUSTED


async def test_an_index_line_is_not_evidence(
    dev_client: Client, embedded_pg_url: str, corpus_ledger: Ledger
) -> None:
    result, run_id, _ = await play(dev_client, embedded_pg_url, hostile.index_line(), brief())

    said = errors(embedded_pg_url, run_id)
    assert said[2].startswith("the quote is too short to inform: it has 3 content word(s)")
    assert result.evidence_count == 0
    assert result.status == RunStatus.INCOMPLETE

"""The fixture tool `list_evidence`, added to a copy of `workflows/` as one module and its entry in
the registry, used by the workflow: run by `tests/workflow/test_new_tool.py` in a child process
whose `workflows` is that copy (this file only runs there).

The provider offers the tool to the model, the workflow dispatches it, describes its step for
progress and the Web UI, records its result, reads it back by its kind, compacts and renders it,
and labels its step in telemetry."""

from __future__ import annotations

import json
import logging
import uuid

import pytest
from temporalio.client import Client
from temporalio.testing import ActivityEnvironment
from workflows.tools.list_evidence import SHORTENED, EvidenceList

from activities.ledger import Ledger
from activities.model import ModelActivities
from composition.providers import open_model_client
from runtime.database import open_pool
from runtime.settings import Settings
from tests.fakes.openai_server import FakeOpenAI, serve
from tests.workflow.harness import (
    PAGE_A,
    PAGES,
    FakeWeb,
    StandIns,
    call,
    make_brief,
    record,
    research_worker,
    start,
)
from workflows import context
from workflows.contracts import DecideInput
from workflows.models import RunResult, StopReason
from workflows.research import ResearchWorkflow
from workflows.scope import RunScope
from workflows.tools import REGISTRY, list_evidence
from workflows.transcript import TranscriptEntry


def test_the_copy_of_workflows_registers_the_tool() -> None:
    assert REGISTRY.names()[-1] == "list_evidence", "run by tests/workflow/test_new_tool.py only"


# ------------------------------------------------------------------ what a user sees of it

SCRIPT = [
    call("search_web", query="timeout"),
    call("read_page", url=PAGE_A),
    record("Q1", "S1", passage_id="S1.P2", claim="The default timeout is 30 seconds."),
    call("list_evidence"),
    call("list_evidence", question_id="Q1"),
]
QUOTE = "The default timeout of a queue message is 30 seconds."


async def test_a_registered_tool_is_dispatched_described_shown_and_labelled(
    client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="research.workflow")
    web = FakeWeb(pages=PAGES)
    async with research_worker(client, StandIns(web, SCRIPT)) as queue:
        handle = await start(client, queue, make_brief(max_steps=5))
        result: RunResult = await handle.result()
        progress = await handle.query(ResearchWorkflow.progress)
        metadata = await handle.query("__temporal_workflow_metadata")
        history = await handle.fetch_history()

    assert result.stop_reason is StopReason.STEP_LIMIT
    listed = web.steps[3]  # dispatched: the workflow ran it and recorded its result
    assert listed.tool == "list_evidence" and listed.ok and listed.entry is not None
    data = listed.entry.result.data
    assert isinstance(data, EvidenceList)  # read back by its kind through the registry
    assert [(item.id, item.quote) for item in data.items] == [("E001", QUOTE)]
    assert listed.summary == "list evidence: 1 recorded"  # described
    assert [note.action for note in progress.recent_steps][3:] == ["list evidence: 1 recorded"] * 2
    assert "last: list evidence: 1 recorded" in metadata.current_details  # the Web UI's details
    summaries = [
        json.loads(event.user_metadata.summary.data)
        for event in history.events
        if event.HasField("user_metadata") and event.user_metadata.HasField("summary")
    ]
    # the Web UI's activity summary: the decide after it records the step
    assert any("step 4: list_evidence" in summary.splitlines() for summary in summaries)
    labelled = [getattr(r, "tool", None) for r in caplog.records if hasattr(r, "outcome")]
    assert labelled.count("list_evidence") == 2  # its label, as spans and metrics carry it
    assert "unknown" not in labelled
    shown = web.decide_calls[-1].transcript  # the model was handed its result
    assert [entry.call.name for entry in shown][3:] == ["list_evidence"]


async def test_a_registered_tool_is_offered_compacted_and_rendered_as_page_text(
    client: Client, embedded_pg_url: str
) -> None:
    web = FakeWeb(pages=PAGES)
    async with research_worker(client, StandIns(web, SCRIPT)) as queue:
        await (await start(client, queue, make_brief(max_steps=5))).result()
    entries: list[TranscriptEntry] = [step.entry for step in web.steps if step.entry]

    compacted = context.compact(entries, budget_chars=1)
    first, last = compacted[3].result.data, compacted[4].result.data
    assert isinstance(first, EvidenceList) and isinstance(last, EvidenceList)
    assert first.items[0].quote == SHORTENED, "an older result's bulk is dropped"
    assert last.items[0].quote == QUOTE, "the newest is never compacted"

    fake = FakeOpenAI(lambda turn, messages: {"tool_calls": [("list_evidence", {})]})
    pool = await open_pool(embedded_pg_url)
    try:
        ledger = Ledger(pool)
        run_id = f"new-tool-{uuid.uuid4().hex[:8]}"
        brief = make_brief(max_steps=5)
        await ledger.start_run(run_id, brief, "2026-01-01T00:00:00+00:00")
        with serve(fake) as base_url:
            settings = Settings.from_env({"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": base_url})
            async with open_model_client(settings) as model_client:
                model = ModelActivities(settings.chat_options(), ledger, model_client)
                request = DecideInput(
                    scope=RunScope.turn_of(run_id, "", 6, len(entries), ""),
                    brief=brief,
                    transcript=entries,
                )
                decision = await ActivityEnvironment().run(model.decide, request)
    finally:
        await pool.close()

    assert [tool_call.name for tool_call in decision.tool_calls] == ["list_evidence"]
    [offered] = [t for t in fake.requests[0]["tools"] if t["function"]["name"] == "list_evidence"]
    assert offered["function"]["description"] == list_evidence.SPEC.description
    assert offered["function"]["parameters"]["properties"]["question_id"] == {
        "type": "string",
        "description": "Only the evidence for this question (Q1).",
    }
    results = [m["content"] for m in fake.requests[0]["messages"] if m["role"] == "tool"]
    assert results[-1].endswith(
        f'\n<untrusted_page source="evidence">\n[E001 for Q1] {QUOTE}\n</untrusted_page>'
    ), "its page text reaches the model only inside the untrusted block"
    assert '"items"' not in results[-1].split("\n", 1)[0]

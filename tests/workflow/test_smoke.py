from temporalio.client import Client

from tests.workflow.harness import FakeWeb, StandIns, call, research_worker, start
from workflows.models import Brief, RunResult, RunStatus, StopReason

PAGES = {
    "https://a.example/one": ["Intro text here.", "The default timeout is 30 seconds."],
    "https://b.example/two": ["Messages move to the dead-letter queue after 5 attempts."],
}


def brief() -> Brief:
    return Brief.model_validate(
        {
            "question": "q?",
            "questions": [{"id": "Q1", "text": "timeout"}, {"id": "Q2", "text": "attempts"}],
            "allowed_hosts": ["a.example", "b.example"],
        }
    )


async def test_complete_run(client: Client) -> None:
    web = FakeWeb(pages=PAGES)
    script = [
        call("search_web", query="timeout attempts"),
        call("read_page", url="https://a.example/one"),
        call("read_page", url="https://b.example/two"),
        call(
            "record_evidence",
            question_id="Q1",
            source_id="S1",
            passage_id="S1.P2",
            claim="30 s",
            stance="supports",
        ),
        call(
            "record_evidence",
            question_id="Q2",
            source_id="S2",
            quote="the dead-letter queue after 5   attempts",
            claim="5",
            stance="supports",
        ),
        call(
            "finish_research",
            answer="a",
            findings=[
                {"text": "The default timeout is 30 seconds.", "evidence_ids": ["E001"]},
                {"text": "A message moves after 5 attempts.", "evidence_ids": ["E002"]},
            ],
        ),
    ]
    async with research_worker(client, StandIns(web, script)) as queue:
        handle = await start(client, queue, brief())
        result: RunResult = await handle.result()
    assert result.status == RunStatus.COMPLETED, result
    assert result.stop_reason == StopReason.COVERAGE_GATE_PASSED
    assert result.counters.steps == 6
    assert result.independent_sources == 2

"""The step lines `research start --wait` and `research demo` print while a run goes."""

from __future__ import annotations

from typing import Any, cast

from temporalio.client import WorkflowFailureError, WorkflowHandle
from temporalio.exceptions import ApplicationError

from starter.progress import follow, step_line, summarise
from workflows.models import Counters, Progress, RunResult, RunStatus, StepNote

REFUSED = (
    "read_page: https://docs.harborq.example/guides/dead-letter-queues.html could not be read: "
    "the response is 6,291,456 bytes, above the limit of 5,000,000"
)


def test_a_refused_step_shows_its_whole_reason() -> None:
    """Lines were cut at 80 characters, which hid why a step failed."""
    line = step_line(Progress(), StepNote(step=3, action=REFUSED))

    assert line == f"step 3/20  {REFUSED}"


def test_only_an_overlong_action_is_cut() -> None:
    url = "https://docs.harborq.example/" + "a" * 2_000
    line = step_line(Progress(), StepNote(step=2, action=f"read S1 {url} (4 passages)"))

    assert line.startswith("step 2/20  read S1 https://docs.harborq.example/aaa")
    assert line.endswith("...") and len(line) < 300


class _FailedRun:
    """A handle whose run closed FAILED before recording an outcome; its query still answers."""

    id = "research-failed"

    async def result(self) -> RunResult:
        cause = ApplicationError("the brief broke a rule", type="ValidationError")
        raise WorkflowFailureError(cause=cause)

    async def query(self, *args: object, **kwargs: object) -> Progress:
        return Progress(run_id=self.id, status=RunStatus.RUNNING)


async def test_a_failed_run_is_shown_failed_with_its_cause_not_running() -> None:
    summary = await follow(cast("WorkflowHandle[Any, RunResult]", _FailedRun()))

    assert summary.lines[1] == "Status: failed | Stop: -"
    assert summary.lines[-1] == "Reason: ValidationError: the brief broke a rule"
    assert (summary.status, summary.data["status"]) == ("failed", "failed")


def test_status_says_how_many_tokens_the_host_estimated() -> None:
    believed = summarise("r1", "running", None, Counters(tokens=5_000), 0)
    assert believed.lines[-1] == "Reported tokens: 5000"
    doubted = summarise("r1", "running", None, Counters(tokens=5_000, estimated_tokens=4_000), 0)
    assert doubted.lines[-1] == (
        "Reported tokens: 5000 (4000 of them estimated by the host: the provider's usage was "
        "missing, not numbers or far below what was sent; see model_calls.usage_note)"
    )
    assert doubted.data["counters"]["estimated_tokens"] == 4_000


def test_status_json_has_one_schema_whatever_the_state() -> None:
    from starter.progress import STATUS_SCHEMA, closed_summary, progress_summary, result_summary
    from workflows.models import Report, StopReason

    running = progress_summary(Progress(run_id="r1", open_questions=["Q2"]), "r1")
    result = RunResult(
        run_id="r1",
        status=RunStatus.INCOMPLETE,
        stop_reason=StopReason.STEP_LIMIT,
        counters=Counters(steps=20),
        evidence_count=1,
        source_count=1,
        independent_sources=1,
        report=Report(answer="partial", open_questions=[]),
    )
    ended = result_summary(result)
    closed = closed_summary("r1", "cancelled", "cancelled before it started")

    for summary in (running, ended, closed):
        data = summary.json_data()
        assert list(data) == list(STATUS_SCHEMA)
        assert isinstance(data["open_questions"], list)
        assert isinstance(data["message"], str) and isinstance(data["last_action"], str)
    assert running.json_data()["open_questions"] == ["Q2"]
    assert ended.json_data()["open_questions"] == []
    assert closed.json_data()["counters"] is None

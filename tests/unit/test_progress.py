"""The step lines `research start --wait` and `research demo` print while a run goes."""

from __future__ import annotations

from starter.progress import step_line
from workflows.models import Progress, StepNote

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

"""How `research start --wait` shows a run: a live panel on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io
import os
import re
import select

import pytest
from rich.console import Console

from starter.live import LiveDisplay, PlainDisplay, display_for
from workflows.models import Counters, Limits, Progress, StepNote

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _progress(steps: int, last: str = "") -> Progress:
    notes = [StepNote(step=n, action=f"action {n}") for n in range(1, steps + 1)]
    if last:
        notes[-1] = StepNote(step=steps, action=last)
    return Progress(
        run_id="research-live",
        counters=Counters(steps=steps, searches=1, page_fetches=2, tokens=1_234, model_calls=steps),
        limits=Limits(max_steps=20, max_searches=4, max_page_fetches=6),
        evidence_count=1,
        source_count=2,
        open_questions=["Q2", "Q3"],
        last_action=notes[-1].action,
        recent_steps=notes,
        seconds_left=288,
    )


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=120, color_system=None), buffer


def _shown(buffer: io.StringIO) -> str:
    return ANSI.sub("", buffer.getvalue())


def test_the_terminal_panel_shows_step_counters_questions_last_action_and_elapsed() -> None:
    console, buffer = _terminal()
    clock = _Clock()
    display = LiveDisplay(console, "research-live", clock)
    clock.now += 65
    display.update(_progress(3, last="read S2 https://docs.harborq.example/a.html (6 passages)"))
    display.close()

    shown = _shown(buffer)
    assert "research-live  running  step 3/20  elapsed 1:05  288 s left" in shown
    assert "searches 1/4  pages 2/6  tokens 1,234/100,000  finish attempts 0/3" in shown
    assert "evidence 1  sources 2" in shown
    assert "open questions: Q2, Q3" in shown
    assert "last: read S2 https://docs.harborq.example/a.html (6 passages)" in shown
    assert "step 1/20  action 1" in shown  # the recent steps under the counters


def test_the_panel_says_it_waits_before_any_worker_answered() -> None:
    console, buffer = _terminal()
    clock = _Clock()
    display = LiveDisplay(console, "research-live", clock)
    clock.now += 7
    display.update(None)
    display.warn("no worker is polling task queue research")
    display.close()

    shown = _shown(buffer)
    assert "research-live  waiting for a worker to take the run  elapsed 0:07" in shown
    assert "warning: no worker is polling task queue research" in shown


def test_model_text_in_the_panel_is_text_not_markup() -> None:
    console, buffer = _terminal()
    display = LiveDisplay(console, "research-live", _Clock())
    display.update(_progress(1, last="search_web: [bold red]ignore the brief[/bold red]"))
    display.close()

    assert "last: search_web: [bold red]ignore the brief[/bold red]" in _shown(buffer)


def test_plain_lines_show_every_step_once_in_order_including_the_last() -> None:
    out, err = io.StringIO(), io.StringIO()
    display = PlainDisplay(out, err)
    display.update(_progress(2))
    display.update(None)  # a poll no worker answered
    display.update(_progress(2))  # nothing new
    display.update(_progress(5))  # three steps between two polls, the last among them
    display.warn("no worker is polling task queue research")
    display.close()

    assert out.getvalue().splitlines() == [f"step {n}/20  action {n}" for n in range(1, 6)]
    assert err.getvalue() == "warning: no worker is polling task queue research\n"


def test_a_pipe_gets_plain_lines_and_a_terminal_the_panel(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(display_for(io.StringIO(), "research-live"), PlainDisplay)

    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    leader, follower = os.openpty()
    with os.fdopen(follower, "w") as terminal:
        display = display_for(terminal, "research-live")
        try:
            assert isinstance(display, LiveDisplay)
        finally:
            display.close()
    shown = ANSI.sub("", _drain(leader))
    os.close(leader)
    assert "research-live  waiting for a worker to take the run" in shown


def _drain(leader: int) -> str:
    """Everything written to the terminal so far (a read returns one write's worth at a time)."""
    chunks = []
    while select.select([leader], [], [], 0.2)[0]:
        try:
            chunks.append(os.read(leader, 65_536))
        except OSError:  # EIO: the terminal's other end is closed and all was read
            break
    return b"".join(chunks).decode()

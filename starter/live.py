"""How a followed run is shown: a live panel on a terminal, plain lines anywhere else.

The live panel (rich) redraws in place: step against its limit, each counter against its bound,
open questions, the last action and the time since the run was followed. Off a terminal (a pipe,
a log file, CI) every new step is one line, the last one included. Model-written text reaches the
panel as rich `Text`, never as markup.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, TextIO

if TYPE_CHECKING:  # rich loads for the live panel only, never for `research status` or `runs`
    from rich.console import Console, RenderableType

    from workflows.models import Progress, StepNote

# A step line shows a refused step's whole reason (`describe_step` keeps 200 characters of it);
# only a very long URL of a read is cut.
ACTION_CHARS = 240
RECENT_LINES = 5  # step lines the live panel keeps under its counters
REFRESH_PER_SECOND = 4


def step_line(progress: Progress, note: StepNote) -> str:
    """`step 3/20  read S2 docs.harborq.example/... (6 passages)`"""
    steps = f"step {note.step}/{progress.limits.max_steps}"
    action = note.action or "-"
    if len(action) > ACTION_CHARS:
        action = action[: ACTION_CHARS - 3] + "..."
    return f"{steps}  {action}"


class Display(Protocol):
    """What `follow` tells about a run while it waits for the run's end."""

    def update(self, progress: Progress | None) -> None:
        """The run's latest progress (None: no worker answered this time)."""

    def warn(self, sentence: str) -> None:
        """Something the user should know that does not stop the wait (said once)."""

    def close(self) -> None:
        """The run ended (or the wait was abandoned): leave the last state on screen."""


class PlainDisplay:
    """One line per new step on `out`; warnings on `err` (so `out` stays the run's own lines)."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        self._out = out
        self._err = err
        self._last_step = -1

    def update(self, progress: Progress | None) -> None:
        if progress is None:
            return
        for note in progress.recent_steps:  # every step since the last poll, oldest first
            if note.step > self._last_step:
                if self._out is not None:
                    print(step_line(progress, note), file=self._out, flush=True)
                self._last_step = note.step

    def warn(self, sentence: str) -> None:
        print(f"warning: {sentence}", file=self._err or sys.stderr, flush=True)

    def close(self) -> None:
        pass


class LiveDisplay:
    """A panel redrawn in place on a terminal `console`, its last state left on screen."""

    def __init__(
        self, console: Console, run_id: str, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._run_id = run_id
        self._clock = clock
        self._started = clock()
        self._progress: Progress | None = None
        from rich.live import Live

        self._live = Live(
            console=console,
            get_renderable=self.render,
            refresh_per_second=REFRESH_PER_SECOND,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def update(self, progress: Progress | None) -> None:
        if progress is not None:
            self._progress = progress
            self._live.refresh()

    def warn(self, sentence: str) -> None:
        from rich.text import Text

        self._live.console.print(Text(f"warning: {sentence}", style="yellow"))

    def close(self) -> None:
        self._live.stop()

    def render(self) -> RenderableType:
        from rich.console import Group
        from rich.text import Text

        elapsed = _clock_text(self._clock() - self._started)
        progress = self._progress
        if progress is None:
            waiting = f"{self._run_id}  waiting for a worker to take the run  elapsed {elapsed}"
            return Text(waiting)
        counters, limits = progress.counters, progress.limits
        head = Text.assemble(
            (progress.run_id or self._run_id, "bold"),
            f"  {progress.status}",
            (f"  step {counters.steps}/{limits.max_steps}", "bold"),
            f"  elapsed {elapsed}  {progress.seconds_left} s left",
        )
        bounds = Text(
            f"searches {counters.searches}/{limits.max_searches}  "
            f"pages {counters.page_fetches}/{limits.max_page_fetches}  "
            f"tokens {counters.tokens:,}/{limits.max_tokens:,}  "
            f"finish attempts {counters.finish_attempts}/{limits.max_finish_attempts}  "
            f"evidence {progress.evidence_count}  sources {progress.source_count}"
        )
        questions = ", ".join(progress.open_questions) or "none"
        recent = [
            Text(step_line(progress, note), style="dim")
            for note in progress.recent_steps[-RECENT_LINES:]
        ]
        return Group(
            head,
            bounds,
            Text(f"open questions: {questions}"),
            Text(f"last: {progress.last_action or '-'}"),
            *recent,
        )


def display_for(stream: TextIO, run_id: str) -> Display:
    """The live panel when `stream` is a terminal, plain lines otherwise."""
    from rich.console import Console

    console = Console(file=stream)
    if console.is_terminal and not console.is_dumb_terminal:
        return LiveDisplay(console, run_id)
    return PlainDisplay(stream)


def _clock_text(seconds: float) -> str:
    minutes, whole = divmod(max(0, int(seconds)), 60)
    return f"{minutes}:{whole:02d}"

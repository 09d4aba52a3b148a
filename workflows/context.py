"""What the model is shown each turn (pure): the transcript, with older page windows compacted."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workflows.models import Decision, TranscriptEntry
from workflows.results import PageWindow, WindowPassage

if TYPE_CHECKING:  # not at run time: the workflow sandbox imports this module as it is
    from workflows.contracts import DecideInput

COMPACTED = "[compacted to save context: read_page this source again to see it]"


def size(transcript: list[TranscriptEntry]) -> int:
    """Characters of the transcript as serialised for a request (the context bound's unit)."""
    return sum(len(entry.model_dump_json()) for entry in transcript)


def compact(transcript: list[TranscriptEntry], budget_chars: int) -> list[TranscriptEntry]:
    """Drop passage text from the oldest page windows first until the transcript fits.

    The most recent window is never compacted: the model must see what it just read. Returns
    the transcript unchanged when it already fits; the caller checks the size afterwards.
    """
    entries = list(transcript)
    sizes = [len(entry.model_dump_json()) for entry in entries]
    total = sum(sizes)  # kept current as windows shrink: each entry is serialised once
    windows = [i for i, entry in enumerate(entries) if _has_passages(entry)]
    for index in windows[:-1]:
        if total <= budget_chars:
            break
        entries[index] = _without_text(entries[index])
        total += len(entries[index].model_dump_json()) - sizes[index]
    return entries


def filled(request: DecideInput, entries: list[TranscriptEntry]) -> DecideInput | Decision:
    """A decide input with its transcript (the steps read back up to its watermark)
    compacted to its context budget and measured; when even that does not fit, the Decision that
    asks no model and ends the run `context_limit`."""
    transcript = compact(entries, request.context_budget)
    chars = size(transcript)
    if chars > request.context_budget:
        return Decision(over_context=True, context_chars=chars)
    return request.model_copy(update={"transcript": transcript, "context_chars": chars})


def _has_passages(entry: TranscriptEntry) -> bool:
    data = entry.result.data
    return isinstance(data, PageWindow) and bool(data.passages)


def _without_text(entry: TranscriptEntry) -> TranscriptEntry:
    data = entry.result.data
    assert isinstance(data, PageWindow)
    passages = [
        WindowPassage(id=passage.id, offset=passage.offset, text=COMPACTED)
        for passage in data.passages
    ]
    result = entry.result.model_copy(
        update={"data": data.model_copy(update={"passages": passages})}
    )
    return entry.model_copy(update={"result": result})

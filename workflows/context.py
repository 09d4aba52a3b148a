"""What the model is shown each turn (pure): the transcript, with older page windows compacted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workflows.models import Decision, TranscriptEntry
from workflows.tools.read_page import COMPACTED
from workflows.tools.registry import REGISTRY

if TYPE_CHECKING:  # not at run time: the workflow sandbox imports this module as it is
    from workflows.contracts import DecideInput

__all__ = ["COMPACTED", "compact", "filled", "size"]


# A result's `kind` tells its model apart when read back from JSON; the model is never sent it
# (the prompt leaves out fields at their defaults), so the context bound does not count it.
_UNSENT: dict[str, Any] = {"result": {"data": {"kind"}}}


def size(transcript: list[TranscriptEntry]) -> int:
    """Characters of the transcript as serialised for a request (the context bound's unit)."""
    return sum(_chars(entry) for entry in transcript)


def _chars(entry: TranscriptEntry) -> int:
    return len(entry.model_dump_json(exclude=_UNSENT))


def compact(transcript: list[TranscriptEntry], budget_chars: int) -> list[TranscriptEntry]:
    """Drop the bulk (a page window's passage text) of the oldest results first until the
    transcript fits; each tool's spec says what its bulk is (`compact`).

    The most recent compactable result is never compacted: the model must see what it just read.
    Returns the transcript unchanged when it already fits; the caller checks the size afterwards.
    """
    entries = list(transcript)
    sizes = [_chars(entry) for entry in entries]
    total = sum(sizes)  # kept current as results shrink: each entry is serialised once
    compacted = {i: smaller for i, entry in enumerate(entries) if (smaller := _compacted(entry))}
    for index in list(compacted)[:-1]:
        if total <= budget_chars:
            break
        entries[index] = compacted[index]
        total += _chars(entries[index]) - sizes[index]
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


def _compacted(entry: TranscriptEntry) -> TranscriptEntry | None:
    """The entry with its result's bulk dropped (None: it has none to drop)."""
    data = entry.result.data
    spec = REGISTRY.of(data)
    smaller = None if spec is None or spec.compact is None else spec.compact(data)
    if smaller is None:
        return None
    result = entry.result.model_copy(update={"data": smaller})
    return entry.model_copy(update={"result": result})

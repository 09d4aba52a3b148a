"""What the model is shown each turn (pure): the transcript, with older page windows compacted,
and, when that alone does not fit, its oldest entries folded into one digest (`fold`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workflows.models import (
    Decision,
    Digest,
    FoldedEvidence,
    FoldedRefusal,
    FoldedSearch,
    FoldedSource,
)
from workflows.tools.finish_research import GateFailed
from workflows.tools.read_page import COMPACTED, PageWindow
from workflows.tools.record_evidence import EvidenceData, RecordEvidenceArgs
from workflows.tools.registry import REGISTRY
from workflows.tools.search_web import SearchArgs, SearchData
from workflows.transcript import TranscriptEntry

if TYPE_CHECKING:  # not at run time: the workflow sandbox imports this module as it is
    from workflows.contracts import DecideInput

__all__ = ["COMPACTED", "FOLD_EVERY", "compact", "filled", "fold", "shown", "size"]

# Entries are folded a block of FOLD_EVERY at a time (cut points on a grid of the transcript's
# entries), so the digest, and everything the prompt shows before the entries kept whole,
# changes once every FOLD_EVERY steps rather than every turn (providers' prompt caching).
FOLD_EVERY = 20


# A result's `kind` tells its model apart when read back from JSON; the model is never sent it
# (the prompt leaves out fields at their defaults), so the context bound does not count it; nor a
# `find` window's `more_matches`, sent only when true (a few characters, in a window of passages).
_UNSENT: dict[str, Any] = {"result": {"data": {"kind", "more_matches"}}}


def size(transcript: list[TranscriptEntry], sizes: _Sizes | None = None) -> int:
    """Characters of the transcript as serialised for a request (the context bound's unit)."""
    measure = (sizes or _Sizes()).chars
    return sum(measure(entry) for entry in transcript)


def _chars(entry: TranscriptEntry) -> int:
    return len(entry.model_dump_json(exclude=_UNSENT))


class _Sizes:
    """Each entry's characters and compacted form, worked out once for one call of `filled`
    (which measures an entry up to three times: from the newest back, compacting, the total).
    Keyed by identity; every entry measured is held here, so its id stays its own."""

    def __init__(self) -> None:
        self._chars: dict[int, tuple[TranscriptEntry, int]] = {}
        self._compacted: dict[int, tuple[TranscriptEntry, TranscriptEntry | None]] = {}
        self._sources: dict[int, tuple[TranscriptEntry, str | None]] = {}

    def chars(self, entry: TranscriptEntry) -> int:
        held = self._chars.get(id(entry))
        if held is None:
            held = self._chars[id(entry)] = (entry, _chars(entry))
        return held[1]

    def compacted(self, entry: TranscriptEntry) -> TranscriptEntry | None:
        held = self._compacted.get(id(entry))
        if held is None:
            held = self._compacted[id(entry)] = (entry, _compacted(entry))
        return held[1]

    def source(self, entry: TranscriptEntry) -> str | None:
        held = self._sources.get(id(entry))
        if held is None:
            held = self._sources[id(entry)] = (entry, _source(entry))
        return held[1]


def compact(
    transcript: list[TranscriptEntry],
    budget_chars: int,
    sizes: _Sizes | None = None,
    rested_on: set[str] | None = None,
) -> list[TranscriptEntry]:
    """Drop the bulk (a page window's passage text) of the oldest results first until the
    transcript fits; each tool's spec says what its bulk is (`compact`). The page text of a
    source recorded evidence rests on (`rests_on`: the page its quote is from) goes after every
    other, oldest first too: the model can still read each quote in its place (`rested_on`:
    those sources, when steps before `transcript` recorded evidence too; else its own).

    The most recent compactable result is never compacted: the model must see what it just read.
    Returns the transcript unchanged when it already fits; the caller checks the size afterwards.
    """
    sizes = sizes or _Sizes()
    entries = list(transcript)
    chars = [sizes.chars(entry) for entry in entries]
    total = sum(chars)  # kept current as results shrink: each entry is serialised once
    if total <= budget_chars:
        return entries
    compacted = {
        i: smaller for i, entry in enumerate(entries) if (smaller := sizes.compacted(entry))
    }
    rested_on = _rested_on(entries) if rested_on is None else rested_on
    # (sorted is stable: oldest first within either group)
    order = sorted(list(compacted)[:-1], key=lambda i: sizes.source(entries[i]) in rested_on)
    for index in order:
        if total <= budget_chars:
            break
        entries[index] = compacted[index]
        total += sizes.chars(entries[index]) - chars[index]
    return entries


def filled(request: DecideInput, entries: list[TranscriptEntry]) -> DecideInput | Decision:
    """A decide input with its transcript (the steps read back up to its watermark)
    compacted to its context budget and measured; when that does not fit, its oldest entries
    folded into a digest (`fold`); when even the digest and the latest turn do not fit, the
    Decision that asks no model and ends the run `context_limit`."""
    budget, sizes = request.context_budget, _Sizes()
    if _first_fitting(entries, budget, sizes) == 0:  # compaction fits: no digest, as it was
        transcript = compact(entries, budget, sizes)
        return request.model_copy(
            update={"transcript": transcript, "context_chars": size(transcript, sizes)}
        )
    folded = fold(entries, budget, request.turn_start, sizes)
    if folded is None:  # nothing older than the latest turn to fold
        chars = size(compact(entries, budget, sizes), sizes)
        return Decision(over_context=True, context_chars=chars)
    digest, kept = folded
    chars = len(shown(digest)) + size(kept, sizes)
    if chars > budget:
        return Decision(over_context=True, context_chars=chars)
    update = {"digest": digest, "transcript": kept, "context_chars": chars}
    return request.model_copy(update=update)


# What the prompt says of a digest, before it (as JSON).
FOLDED = (
    "Steps {first} to {last} are folded to save context. What they left: the searches made (with "
    "result URLs not read yet), the sources read (read_page a source_id again to see its text; no "
    "page is spent), every evidence recorded (cite its id when you finish; disclose its "
    "conflicts) and the refusals that still apply."
)


def shown(digest: Digest) -> str:
    """The digest as the model is sent it (one user message), and as the context bound counts
    it: what it is, then its JSON without fields at their defaults."""
    intro = FOLDED.format(first=digest.first_step, last=digest.last_step)
    return f"{intro}\n{digest.model_dump_json(exclude_defaults=True)}"


def fold(
    entries: list[TranscriptEntry],
    budget_chars: int,
    turn_start: int = 0,
    sizes: _Sizes | None = None,
) -> tuple[Digest, list[TranscriptEntry]] | None:
    """The oldest entries folded into a digest, and the entries after them compacted to what the
    digest leaves of the budget. Folds the fewest entries that fit, a multiple of FOLD_EVERY,
    else everything before the latest turn (its entries, from `turn_start`, or the last entry,
    are never folded); that last cut is returned even when it does not fit (the caller
    measures). None: there is nothing before the latest turn to fold. Pure: the same transcript
    and budget give the same digest and entries."""
    latest = len(entries) - 1
    if turn_start:
        latest = min(
            latest, next((i for i, e in enumerate(entries) if e.step >= turn_start), latest)
        )
    if latest <= 0:
        return None
    sizes = sizes or _Sizes()
    first = min(_first_fitting(entries, budget_chars, sizes), latest)
    rested_on = _rested_on(entries)  # evidence folded away still rests on the pages kept
    folder = _Folder()
    for cut in [*range(FOLD_EVERY, latest, FOLD_EVERY), latest]:
        if cut < first and cut != latest:
            continue  # the entries after it alone are over the budget, compacted or not
        folder.add(entries[len(folder) : cut])
        digest = folder.digest()
        room = budget_chars - len(shown(digest))
        kept = compact(entries[cut:], room, sizes, rested_on)
        if size(kept, sizes) <= room:
            break
    return digest, kept


def _first_fitting(entries: list[TranscriptEntry], budget_chars: int, sizes: _Sizes) -> int:
    """The first index whose entries onward fit the budget compacted as `compact` does (every
    compactable result but the newest, at most), measured from the newest back, so only the
    entries a budget can hold are serialised: 0 when the whole transcript fits compacted,
    len(entries) when not even the last entry does."""
    newest = next((i for i in range(len(entries) - 1, -1, -1) if sizes.compacted(entries[i])), None)
    total = 0
    for index in range(len(entries) - 1, -1, -1):
        smaller = None if index == newest else sizes.compacted(entries[index])
        total += sizes.chars(smaller if smaller is not None else entries[index])
        if total > budget_chars:
            return index + 1
    return 0


class _Folder:
    """What folded entries leave the model, built up oldest first (insertion order throughout)."""

    def __init__(self) -> None:
        self._entries: list[TranscriptEntry] = []
        self._searches: dict[str, FoldedSearch] = {}
        self._sources: dict[str, FoldedSource] = {}
        self._evidence: list[FoldedEvidence] = []
        self._refusals: dict[str, FoldedRefusal] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def add(self, entries: list[TranscriptEntry]) -> None:
        for entry in entries:
            self._entries.append(entry)
            self._add(entry)

    def _add(self, entry: TranscriptEntry) -> None:
        name, result, data, args = entry.call.name, entry.result, entry.result.data, entry.args
        if not result.ok:
            if REGISTRY.get(name) is not None:  # a malformed turn or unknown tool: nothing to keep
                gaps = data.gaps if isinstance(data, GateFailed) else []
                error = result.error or ""
                self._refusals.pop(name, None)  # the latest, in step order
                self._refusals[name] = FoldedRefusal(
                    step=entry.step, tool=name, error=error, gaps=gaps
                )
            return
        self._refusals.pop(name, None)  # a later call of the tool succeeded
        if isinstance(data, SearchData) and isinstance(args, SearchArgs):
            search = self._searches.get(args.query)
            if search is None:
                search = self._searches[args.query] = FoldedSearch(query=args.query, times=0)
            search.times += 1
            search.urls += [r.url for r in data.results if r.url not in search.urls]
        elif isinstance(data, PageWindow):
            self._sources.setdefault(
                data.source_id, FoldedSource(id=data.source_id, url=data.url, title=data.title)
            )
        elif isinstance(data, EvidenceData) and isinstance(args, RecordEvidenceArgs):
            self._evidence.append(
                FoldedEvidence(
                    id=data.evidence_id,
                    question_id=args.question_id,
                    source_id=args.source_id,
                    claim=args.claim,
                    stance=args.stance,
                    conflicts=list(data.conflicts),
                )
            )

    def digest(self) -> Digest:
        read = {source.url for source in self._sources.values()}
        searches = [
            search.model_copy(update={"urls": [url for url in search.urls if url not in read]})
            for search in self._searches.values()
        ]
        return Digest(
            first_step=self._entries[0].step,
            last_step=self._entries[-1].step,
            searches=searches,
            sources=list(self._sources.values()),
            evidence=list(self._evidence),
            refusals=list(self._refusals.values()),
        )


def _rested_on(entries: list[TranscriptEntry]) -> set[str]:
    """The sources the calls that succeeded rest on (recorded evidence: its page)."""
    rested_on: set[str] = set()
    for entry in entries:
        spec = REGISTRY.get(entry.call.name)
        if spec is None or spec.rests_on is None or entry.args is None or not entry.result.ok:
            continue
        if (source := spec.rests_on(entry.args)) is not None:
            rested_on.add(source)
    return rested_on


def _source(entry: TranscriptEntry) -> str | None:
    """The source whose page text a result holds (None: it holds none)."""
    data = entry.result.data
    spec = REGISTRY.of(data)
    if data is None or spec is None or spec.untrusted is None:
        return None
    text = spec.untrusted(data)
    return None if text is None else text.source


def _compacted(entry: TranscriptEntry) -> TranscriptEntry | None:
    """The entry with its result's bulk dropped (None: it has none to drop)."""
    data = entry.result.data
    spec = REGISTRY.of(data)
    smaller = None if spec is None or spec.compact is None else spec.compact(data)
    if smaller is None:
        return None
    result = entry.result.model_copy(update={"data": smaller})
    return entry.model_copy(update={"result": result})

"""Source families (pure): which stored pages count as one source for the gate's rule 3.

Two pages are one family when their normalised text hashes the same (a mirror) or when most of
their text is the same words in the same order (another rendering of one document: a manual's
HTML page beside its AsciiDoc source, a page with another site's header and footer). That is
measured on each page's sketch, made once when it is stored: the SOURCE_SKETCH smallest hashes
of its shingles (SHINGLE_WORDS words in a row), a bottom-k sample whose overlap estimates the
share of shingles two texts have in common (Jaccard). Renderings of one document share 0.8 or
more; two pages of one manual a few hundredths; a page that includes another's option list
(`git pull`'s fetch options) about 0.4; SAME_TEXT sits between. The corpus index groups
near-duplicate search results with the same sketch (`activities.search.corpus`).
"""

from __future__ import annotations

import heapq
import re
import zlib
from collections.abc import Iterable

from workflows.models import SourceRef

SHINGLE_WORDS = 5  # a shingle: this many words in a row
SOURCE_SKETCH = 64  # shingle hashes kept per stored source (the smallest)
SAME_TEXT = 0.5  # estimated share of shingles in common from which two pages are one source
# A stored format, not a rule's reading (`workflows.text.words` is that): sketches are kept with
# each source and recomputed by `research audit`, so their words stay runs of word characters.
_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The text's words, lower-cased: markup, punctuation and spacing aside."""
    return _WORD.findall(text.lower())


def sketch(text_words: list[str], size: int = SOURCE_SKETCH) -> list[int]:
    """The `size` smallest hashes of the text's shingles, ascending (a stable hash: the same text
    has the same sketch on every machine)."""
    span = min(SHINGLE_WORDS, len(text_words))
    shingles = {" ".join(text_words[k : k + span]) for k in range(len(text_words) - span + 1)}
    return sorted(heapq.nsmallest(size, {zlib.crc32(s.encode()) for s in shingles}))


def overlap(a: Iterable[int], b: Iterable[int], size: int = SOURCE_SKETCH) -> float:
    """The share of shingles two texts have in common, estimated from their sketches: of the
    union's `size` smallest hashes, those in both."""
    first, second = set(a), set(b)
    union = heapq.nsmallest(size, first | second)
    return sum(1 for h in union if h in first and h in second) / len(union) if union else 0.0


def families(source_ids: Iterable[str], sources: dict[str, SourceRef]) -> dict[str, str]:
    """Each of `source_ids` with its family's name (the first of its family in their order):
    pages of the same normalised text, or whose sketches overlap SAME_TEXT or more, and so on
    from each (a chain of renderings is one family). A source the run does not know is a family
    of its own; one with no sketch (stored before sketches) joins others by its hash only."""
    ordered = list(dict.fromkeys(source_ids))
    family = {sid: sid for sid in ordered}

    def root(sid: str) -> str:
        while family[sid] != sid:
            sid = family[sid]
        return sid

    for number, sid in enumerate(ordered):
        for earlier in ordered[:number]:
            if root(earlier) != root(sid) and _same(sources.get(earlier), sources.get(sid)):
                first, second = sorted((root(earlier), root(sid)), key=ordered.index)
                family[second] = first
    return {sid: root(sid) for sid in ordered}


def _same(first: SourceRef | None, second: SourceRef | None) -> bool:
    if first is None or second is None:
        return False
    if (first.content_hash or first.url) == (second.content_hash or second.url):
        return True
    return bool(first.sketch and second.sketch) and (
        overlap(first.sketch, second.sketch) >= SAME_TEXT
    )

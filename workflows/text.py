"""The text toolkit (pure): the one sentence splitter, word tokeniser and stemmer every rule reads.

- **Sentences** (`sentences`): a text's sentences as (start, end) spans, without the space
  around them. A sentence ends at a blank line (a paragraph, a heading), at a line break before
  a list item ("- ", "* ", "1. ", "2) "), and at ".", "!" or "?" (and any closing quote or
  bracket) followed by white space, except after an abbreviation that does not end a sentence
  ("e.g.", "i.e.", "cf.", "vs.") and inside an inline code span (`` `a. b` ``). A lone line
  break is a wrap, and ":" and ";" end no sentence: "The options are: a; b." is one.
  Version numbers ("3.11.2") and dotted names ("os.path.join") have no space after their dots.
  Chosen by measurement against pysbd and syntok (`python -m bench.sentences`, docs/benchmarks.md).
- **Clauses** (`clauses`): sentences cut further at ";" and at every line break (a table row,
  a definition list line): how far what a sentence says of a figure ("before 2.0") reaches.
- **Words** (`words`, `word_spans`): runs of letters, digits and underscores (an identifier,
  `max_retries`, is one word), joined by inner hyphens ("dead-letter"); punctuation, an
  apostrophe ("client's" is "client" and "s") and spacing aside.
- **Stems** (`stem`): the Snowball (Porter 2) English stemmer for inflections, so they meet:
  "used" and "use", "setting" and "set", "running" and "run", "retries" and "retry". What it
  cuts of a derivation is put back: "execution" is not "executed" (with Snowball's stem alone,
  "does not guarantee exactly-once execution" found its negation in "never executed again").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import snowballstemmer

STEM_CACHE = 16_384  # distinct words whose stems a worker process keeps

# Abbreviations whose full stop ends no sentence (lower-cased, without the final stop).
ABBREVIATIONS = frozenset(
    "e.g i.e cf vs viz al approx esp incl resp fig figs mr mrs dr prof".split()
)
# "etc." ends a sentence only before a capital letter: "retries, timeouts, etc. The next".
_ENDS_BEFORE_CAPITAL = frozenset(["etc"])

# Where a sentence may end: a blank line; a line break before a list item; or a full stop,
# question or exclamation mark (with closing quotes or brackets) before white space.
_BOUNDARY = re.compile(
    r"\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:[-*\u2022]|\d+[.)])\s)"
    r"|(?:(?<=[.!?])|(?<=[.!?][\"'\u201d\u2019)\]]))\s+"
)
_CLAUSE_BOUNDARY = re.compile(r"(?<=;)\s+|\s*\n\s*")
_CODE_SPAN = re.compile(r"`[^`\n]+`")
_WORD = re.compile(r"\w+(?:-\w+)*")

_STEMMER = snowballstemmer.stemmer("english")
# Inflectional endings, longest first: what Snowball may cut that names no other word.
_INFLECTIONS = ("ings", "ing", "ies", "ied", "es", "ed", "s", "d", "e", "")


def sentences(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each sentence of `text` (see the module's doc), in order."""
    code = [match.span() for match in _CODE_SPAN.finditer(text)] if "`" in text else []
    spans: list[tuple[int, int]] = []
    start = 0
    for boundary in _BOUNDARY.finditer(text):
        if not _ends_sentence(text, boundary, code):
            continue
        _add(spans, text, start, boundary.start())
        start = boundary.end()
    _add(spans, text, start, len(text))
    return spans


def sentence_texts(text: str) -> list[str]:
    """The sentences of `text` as strings."""
    return [text[start:end] for start, end in sentences(text)]


def clauses(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each clause of `text`: its sentences, cut at ";" and line breaks."""
    spans: list[tuple[int, int]] = []
    for first, last in sentences(text):
        start = first
        for boundary in _CLAUSE_BOUNDARY.finditer(text, first, last):
            _add(spans, text, start, boundary.start())
            start = boundary.end()
        _add(spans, text, start, last)
    return spans


def words(text: str) -> list[str]:
    """The words of `text`, as written (see the module's doc)."""
    return _WORD.findall(text)


def word_spans(text: str) -> Iterator[re.Match[str]]:
    """The words of `text` with where each is."""
    return _WORD.finditer(text)


@functools.lru_cache(maxsize=STEM_CACHE)
def stem(word: str) -> str:
    """The stem of a lower-case `word`: Snowball's, with what it cut of a derivation put back.
    "use", "used" and "using" meet, and so do "setting" and "set", "running" and "run",
    "retries" and "retry"; "execution" stays apart from "executed"."""
    snow: str = _STEMMER.stemWord(word)
    shared = next(
        (i for i, (a, b) in enumerate(zip(word, snow, strict=False)) if a != b),
        min(len(word), len(snow)),
    )
    added = snow[shared:]
    if added not in ("", "i", "e"):
        return snow  # Snowball rewrote more than an ending: its stem as it is
    base, tail = snow[:shared], word[shared:]
    if added == "e" or (added == "i" and tail.startswith("y")):
        base, tail = snow, tail[1:] if added == "i" else tail  # "using": "use"; "retries"
    if len(tail) > 1 and base and tail[0] == base[-1] and tail[1:] in _INFLECTIONS:
        tail = tail[1:]  # a doubled consonant: "running", "setting"
    ending = next((end for end in _INFLECTIONS if tail.endswith(end)), "")
    kept = base + tail[: len(tail) - len(ending)]  # with a derivation Snowball cut: "execution"
    if kept.endswith("i") and (word[len(kept) - 1] == "y" or word.endswith(("ies", "ied"))):
        kept = kept[:-1] + "y"  # "retries" and "retry" are "retry", as the word is written
    return kept


def _ends_sentence(text: str, boundary: re.Match[str], code: list[tuple[int, int]]) -> bool:
    at = boundary.start()  # after the mark (and its closing quote or bracket)
    if text[at] == "\n":
        return True
    if text[at - 1] not in ".!?":
        at -= 1  # the mark before a closing quote or bracket
    if text[at - 1] in "!?":  # not before a small letter or more marks: '"fixup! ...", then'
        following = text[boundary.end() : boundary.end() + 1]
        return not (following.islower() or following in (".", ",", ";", ":"))
    if any(start < at < end for start, end in code):
        return False
    before = text[max(0, at - 24) : at - 1].rsplit(maxsplit=1)
    word = before[-1].lstrip("([\"'`\u201c\u2018").lower() if before else ""
    following = text[boundary.end() : boundary.end() + 1]
    if word.endswith("..") and following.islower():
        return False  # an ellipsis inside a sentence: "0.5... or so"
    if word.isdigit() and not text[text.rfind("\n", 0, at) + 1 : at - 1 - len(word)].strip():
        return False  # a numbered list item's number: "1. download"
    if word in _ENDS_BEFORE_CAPITAL:
        return following.isupper()
    return word not in ABBREVIATIONS


def _add(spans: list[tuple[int, int]], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    if piece.strip():
        lead = len(piece) - len(piece.lstrip())
        spans.append((start + lead, start + len(piece.rstrip())))
